package replication

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

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

// ProtoVersion is the link protocol version named in the handshake. The
// link ships store records and Pebble batches as they are, so it also
// names the store format: 1 carried format 2, 2 format 3 (metadata
// records beside their key's data), 3 carries format 4
// (storage.FormatVersion; entry records of several entries). A primary
// refuses a replica of another version, so stores of different formats
// never link.
const ProtoVersion = 3

// Features are the features this side speaks, named in the handshake.
// The first three are the base every version speaks; "crc" adds the checksums (doc.go).
var Features = []string{"batch", "ack", "heartbeat", FeatureCRC}

// FeatureCRC names the frame checksums. A replica asks for it in
// REPLCONF eddy-proto; a primary that uses it answers "+OK crc". A peer
// that does not know it asks for or answers nothing, and frames go
// without checksums.
const FeatureCRC = "crc"

// AgreedFeatures returns the features of asked that change the wire and
// that this side speaks, as the primary names them in its answer.
func AgreedFeatures(asked []string) []string {
	if slices.Contains(asked, FeatureCRC) {
		return []string{FeatureCRC}
	}
	return nil
}

// maxFrame bounds a frame's payload: a group's batch is about 1 MB, a
// single command's at most proto-max-bulk-len.
const maxFrame = 1 << 30

// frameHeader is the length of a frame's type and length.
const frameHeader = 5

// crcLen is the length of one checksum.
const crcLen = 4

// castagnoli is CRC-32C's table: hardware-accelerated on amd64 and arm64.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors of the link.
var (
	// ErrBadFrame: a frame that does not decode.
	ErrBadFrame = errors.New("replication: malformed frame")
	// ErrChecksum: a frame whose checksum does not match: it was damaged
	// on the way and must not be applied.
	ErrChecksum = fmt.Errorf("%w: checksum mismatch", ErrBadFrame)
	// ErrOffset: a batch that does not start where the last one ended.
	ErrOffset = errors.New("replication: batch out of order")
)

// writeFrame writes one frame to w; with crc, the header's and the
// payload's checksums too.
func writeFrame(w *bufio.Writer, crc bool, typ byte, payload []byte) error {
	var h [frameHeader + crcLen]byte
	h[0] = typ
	binary.BigEndian.PutUint32(h[1:], uint32(len(payload)))
	n := frameHeader
	if crc {
		binary.BigEndian.PutUint32(h[frameHeader:], crc32.Checksum(h[:frameHeader], castagnoli))
		n += crcLen
	}
	if _, err := w.Write(h[:n]); err != nil {
		return err
	}
	if _, err := w.Write(payload); err != nil {
		return err
	}
	if !crc {
		return nil
	}
	_, err := w.Write(binary.BigEndian.AppendUint32(h[:0], crc32.Checksum(payload, castagnoli)))
	return err
}

// writeU64Frame writes a frame whose payload is one integer.
func writeU64Frame(w *bufio.Writer, crc bool, typ byte, v uint64) error {
	var p [8]byte
	binary.BigEndian.PutUint64(p[:], v)
	return writeFrame(w, crc, typ, p[:])
}

// readFrame reads one frame from r into buf (grown as needed) and
// returns its type and payload, which aliases buf. With crc it checks
// the header before trusting its length, so that a damaged length is
// never waited for, and the payload before returning it.
func readFrame(r *bufio.Reader, crc bool, buf []byte) (typ byte, payload, nbuf []byte, err error) {
	var h [frameHeader + crcLen]byte
	hl := frameHeader
	if crc {
		hl += crcLen
	}
	if _, err := io.ReadFull(r, h[:hl]); err != nil {
		return 0, nil, buf, err
	}
	if crc && crc32.Checksum(h[:frameHeader], castagnoli) != binary.BigEndian.Uint32(h[frameHeader:]) {
		return 0, nil, buf, fmt.Errorf("%w in a frame header", ErrChecksum)
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxFrame {
		return 0, nil, buf, fmt.Errorf("%w: %d bytes", ErrBadFrame, n)
	}
	need := int(n)
	if crc {
		need += crcLen
	}
	if cap(buf) < need {
		buf = make([]byte, need)
	}
	buf = buf[:need]
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, buf, err
	}
	payload = buf[:n]
	if crc && crc32.Checksum(payload, castagnoli) != binary.BigEndian.Uint32(buf[n:]) {
		return 0, nil, buf, fmt.Errorf("%w in a %q frame of %d bytes", ErrChecksum, h[0], n)
	}
	return h[0], payload, buf, nil
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
