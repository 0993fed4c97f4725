package replication

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/eddy-streams/eddy/stream"
)

// Frame types (doc.go draws the layout). Never renumbered or reused.
const (
	FrameRecords   byte = 'R'
	FrameSnapEnd   byte = 'E'
	FrameBatch     byte = 'B'
	FrameHeartbeat byte = 'H'
	FrameAck       byte = 'A'
)

// ProtoVersion is the link protocol version named in the handshake.
const ProtoVersion = 1

// Features are the features this side speaks, named in the handshake.
var Features = []string{"batch", "ack", "heartbeat"}

// maxFrame bounds a frame's payload: a group's batch is about 1 MB, a
// single command's at most proto-max-bulk-len.
const maxFrame = 1 << 30

// frameHeader is the length of a frame's type and length.
const frameHeader = 5

// Errors of the link.
var (
	// ErrBadFrame: a frame that does not decode.
	ErrBadFrame = errors.New("replication: malformed frame")
	// ErrOffset: a batch that does not start where the last one ended.
	ErrOffset = errors.New("replication: batch out of order")
)

// writeFrame writes one frame to w.
func writeFrame(w *bufio.Writer, typ byte, payload []byte) error {
	var h [frameHeader]byte
	h[0] = typ
	binary.BigEndian.PutUint32(h[1:], uint32(len(payload)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// writeU64Frame writes a frame whose payload is one integer.
func writeU64Frame(w *bufio.Writer, typ byte, v uint64) error {
	return writeFrame(w, typ, binary.BigEndian.AppendUint64(nil, v))
}

// readFrame reads one frame from r into buf (grown as needed) and
// returns its type and payload, which aliases buf.
func readFrame(r *bufio.Reader, buf []byte) (typ byte, payload, nbuf []byte, err error) {
	var h [frameHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, buf, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxFrame {
		return 0, nil, buf, fmt.Errorf("%w: %d bytes", ErrBadFrame, n)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, buf, err
	}
	return h[0], buf, buf, nil
}

// decodeU64 decodes a payload that is one integer.
func decodeU64(p []byte) (uint64, error) {
	if len(p) != 8 {
		return 0, ErrBadFrame
	}
	return binary.BigEndian.Uint64(p), nil
}

// AppendBatch appends the payload of a batch frame: the offset it starts
// at, its changes, and its representation.
func AppendBatch(dst []byte, off uint64, changes []stream.Change, repr []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, off)
	dst = binary.AppendUvarint(dst, uint64(len(changes)))
	for _, c := range changes {
		var flags byte
		if c.AllDBs {
			flags = 1
		}
		dst = append(dst, byte(c.Kind), flags)
		dst = binary.AppendUvarint(dst, uint64(c.DB))
		dst = binary.AppendUvarint(dst, uint64(len(c.Key)))
		dst = append(dst, c.Key...)
	}
	return append(dst, repr...)
}

// DecodeBatch decodes a batch payload. The changes' keys and repr alias p.
func DecodeBatch(p []byte) (off uint64, changes []stream.Change, repr []byte, err error) {
	if len(p) < 8 {
		return 0, nil, nil, ErrBadFrame
	}
	off = binary.BigEndian.Uint64(p)
	p = p[8:]
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)) {
		return 0, nil, nil, ErrBadFrame
	}
	p = p[k:]
	changes = make([]stream.Change, 0, n)
	for range n {
		if len(p) < 2 {
			return 0, nil, nil, ErrBadFrame
		}
		c := stream.Change{Kind: stream.ChangeKind(p[0]), AllDBs: p[1]&1 != 0}
		p = p[2:]
		db, k := binary.Uvarint(p)
		if k <= 0 || db > 1<<16 {
			return 0, nil, nil, ErrBadFrame
		}
		p = p[k:]
		kl, k := binary.Uvarint(p)
		if k <= 0 || kl > uint64(len(p)-k) {
			return 0, nil, nil, ErrBadFrame
		}
		p = p[k:]
		c.DB = int(db)
		if kl > 0 || c.Kind != stream.Flushed {
			c.Key = p[:kl:kl]
		}
		p = p[kl:]
		changes = append(changes, c)
	}
	return off, changes, p, nil
}

// appendRecord appends one snapshot record to a records frame's payload.
func appendRecord(dst, key, value []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	return append(dst, value...)
}

// eachRecord calls fn for each record of a records frame's payload.
func eachRecord(p []byte, fn func(key, value []byte) error) error {
	for len(p) > 0 {
		kl, k := binary.Uvarint(p)
		if k <= 0 || kl > uint64(len(p)-k) {
			return ErrBadFrame
		}
		key := p[k : k+int(kl)]
		p = p[k+int(kl):]
		vl, k := binary.Uvarint(p)
		if k <= 0 || vl > uint64(len(p)-k) {
			return ErrBadFrame
		}
		value := p[k : k+int(vl)]
		p = p[k+int(vl):]
		if err := fn(key, value); err != nil {
			return err
		}
	}
	return nil
}
