package stream

import (
	"encoding/binary"
	"errors"
	"math"
)

// This file models the listpack nodes Redis 7.0 keeps a stream in. Eddy
// stores entries in Pebble, yet XINFO STREAM reports radix-tree-keys and
// MAXLEN ~ / MINID ~ remove whole nodes only, so which entries share a node
// must be decided exactly as Redis decides it. That decision reads the exact
// byte size of the tail listpack, hence the encoding arithmetic below.
//
// A node's listpack, as t_stream.c lays it out:
//
//	header(6) | count | deleted | num-fields | field... | 0 | entry... | EOF(1)
//	entry:      flags | ms-delta | seq-delta | [num-fields | field/value pairs] | values | lp-count
//
// The bracketed part is left out (only values are written) when the entry's
// fields equal the master fields (the "same fields" flag).

// Listpack layout constants (listpack.c).
const (
	lpHeaderSize = 6 // total-bytes uint32 + num-elements uint16
	lpEOFSize    = 1
	// streamListpackMaxSize caps stream-node-max-bytes (STREAM_LISTPACK_MAX_SIZE).
	streamListpackMaxSize = 1 << 30
)

// Entry flags stored in each entry's first element (t_stream.c). Both
// values, with or without the deleted bit, are 7-bit uints, so flagging an
// entry deleted never changes the listpack size.
const (
	flagDeleted    = 1 << 0
	flagSameFields = 1 << 1
)

// nodeEncodingV2 is the first byte of AppendBinary's output. Stored in
// Pebble: never renumber or reuse (1 lacked FirstSeq).
const nodeEncodingV2 = 2

// ErrNodeEncoding reports a node record that DecodeNode cannot read.
var ErrNodeEncoding = errors.New("stream: corrupt node encoding")

// NodeLimits mirrors stream-node-max-bytes / stream-node-max-entries
// (0 = unlimited as Redis treats it).
type NodeLimits struct{ MaxBytes, MaxEntries int64 }

// Node models one listpack node of a Redis stream.
type Node struct {
	Master  ID       // rax key: ID of the first entry ever appended to the node
	Fields  [][]byte // master entry field names
	Count   int64    // live entries
	Deleted int64    // entries flagged deleted
	Bytes   int64    // exact lpBytes() of the listpack Redis would hold
	Last    ID       // ID of the last entry appended (for MINID trimming)
	// FirstSeq is the sequence of the node's first entry (Master): the
	// node's key in the seq index (storage/keys.go). Not part of Redis's
	// model.
	FirstSeq uint64
}

// NewNode returns a fresh node holding one entry, as streamAppendItem
// builds it when the tail node is full or the stream has no node.
func NewNode(id ID, fields, values [][]byte) Node {
	n := Node{Master: id, Fields: cloneFields(fields), Count: 1, Last: id}
	b := int64(lpHeaderSize + lpEOFSize)
	b += lpIntElemSize(1) + lpIntElemSize(0) + lpIntElemSize(int64(len(fields)))
	for _, f := range fields {
		b += lpStrElemSize(f)
	}
	b += lpIntElemSize(0) // master entry terminator
	b += entrySize(id, id, fields, values, true)
	n.Bytes = b
	return n
}

// Accepts reports whether Redis would append an entry with these fields and
// values to n; false means it starts a new node. The byte rule adds the raw
// field and value lengths to the current listpack size (not their encoded
// size), and the entry rule counts deleted entries too.
func (n *Node) Accepts(fields, values [][]byte, lim NodeLimits) bool {
	maxBytes := lim.MaxBytes
	if maxBytes <= 0 || maxBytes > streamListpackMaxSize {
		maxBytes = streamListpackMaxSize
	}
	var raw int64
	for _, f := range fields {
		raw += int64(len(f))
	}
	for _, v := range values {
		raw += int64(len(v))
	}
	if n.Bytes+raw >= maxBytes {
		return false
	}
	if lim.MaxEntries > 0 && n.Count+n.Deleted >= lim.MaxEntries {
		return false
	}
	return true
}

// Append adds an entry to n the way streamAppendItem does once Accepts said
// yes: the master count is rewritten in place (its encoded size may grow)
// and the entry is appended, field names omitted when they equal the master
// fields.
func (n *Node) Append(id ID, fields, values [][]byte) {
	n.Bytes += lpIntElemSize(n.Count+1) - lpIntElemSize(n.Count)
	n.Count++
	n.Bytes += entrySize(n.Master, id, fields, values, sameFields(n.Fields, fields))
	n.Last = id
}

// Delete accounts for one live entry of n being flagged deleted (XDEL, or an
// exact trim reaching into n). Only the master count and deleted counters
// change size; the entry's flag stays a one-byte integer, so the entry's
// ID, fields and values do not matter and are accepted only to keep call
// sites uniform. Redis frees the node instead when XDEL removes its last live
// entry: callers drop n when Count reaches 0 after an XDEL. An exact trim
// can leave a node with Count 0 (its last entry was deleted earlier), and
// Redis keeps such a node until a later trim removes it.
func (n *Node) Delete(_ ID, _, _ [][]byte) {
	n.Bytes += lpIntElemSize(n.Count-1) - lpIntElemSize(n.Count)
	n.Count--
	n.Bytes += lpIntElemSize(n.Deleted+1) - lpIntElemSize(n.Deleted)
	n.Deleted++
}

// AppendBinary appends n's compact encoding to dst: a version byte, then
// uvarints for Master, Last, Count, Deleted, Bytes, FirstSeq, the field
// count and each field's length followed by its bytes.
func (n Node) AppendBinary(dst []byte) []byte {
	dst = append(dst, nodeEncodingV2)
	dst = binary.AppendUvarint(dst, n.Master.Ms)
	dst = binary.AppendUvarint(dst, n.Master.Seq)
	dst = binary.AppendUvarint(dst, n.Last.Ms)
	dst = binary.AppendUvarint(dst, n.Last.Seq)
	dst = binary.AppendUvarint(dst, uint64(n.Count))
	dst = binary.AppendUvarint(dst, uint64(n.Deleted))
	dst = binary.AppendUvarint(dst, uint64(n.Bytes))
	dst = binary.AppendUvarint(dst, n.FirstSeq)
	dst = binary.AppendUvarint(dst, uint64(len(n.Fields)))
	for _, f := range n.Fields {
		dst = binary.AppendUvarint(dst, uint64(len(f)))
		dst = append(dst, f...)
	}
	return dst
}

// DecodeNode decodes what AppendBinary wrote. The result does not alias b.
func DecodeNode(b []byte) (Node, error) {
	if len(b) == 0 || b[0] != nodeEncodingV2 {
		return Node{}, ErrNodeEncoding
	}
	d := nodeDecoder{b: b[1:]}
	var n Node
	n.Master.Ms = d.uvarint()
	n.Master.Seq = d.uvarint()
	n.Last.Ms = d.uvarint()
	n.Last.Seq = d.uvarint()
	n.Count = d.int64()
	n.Deleted = d.int64()
	n.Bytes = d.int64()
	n.FirstSeq = d.uvarint()
	nf := d.uvarint()
	if d.err != nil || nf > uint64(len(d.b)) { // each field takes at least one byte
		return Node{}, ErrNodeEncoding
	}
	if nf > 0 {
		n.Fields = make([][]byte, nf)
	}
	for i := range n.Fields {
		l := d.uvarint()
		if d.err != nil || l > uint64(len(d.b)) {
			return Node{}, ErrNodeEncoding
		}
		n.Fields[i] = append([]byte{}, d.b[:l]...)
		d.b = d.b[l:]
	}
	if d.err != nil || len(d.b) != 0 {
		return Node{}, ErrNodeEncoding
	}
	return n, nil
}

// nodeDecoder reads uvarints, remembering the first failure.
type nodeDecoder struct {
	b   []byte
	err error
}

func (d *nodeDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err = ErrNodeEncoding
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *nodeDecoder) int64() int64 {
	v := d.uvarint()
	if v > 1<<63-1 {
		d.err = ErrNodeEncoding
		return 0
	}
	return int64(v)
}

// TrimApprox returns how many head nodes streamTrim removes for
// XADD/XTRIM with MAXLEN ~ maxlen (minid nil) or MINID ~ *minid. length is
// the stream's live entry count. limit caps the live entries removed; 0 means
// no cap (see DefaultTrimLimit for the value Redis uses without LIMIT). Only
// whole nodes go: the walk stops at the first node it may not remove whole.
func TrimApprox(nodes []Node, length int64, maxlen int64, minid *ID, limit int64) (removeNodes int) {
	var deleted int64
	for i := range nodes {
		stop, whole := trimStep(&nodes[i], length, deleted, maxlen, minid, limit)
		if stop || !whole {
			break
		}
		length -= nodes[i].Count
		deleted += nodes[i].Count
		removeNodes++
	}
	return removeNodes
}

// trimStep is streamTrim's decision for the next head node n, given the
// stream's live length and the entries removed so far: stop before n, or
// remove n whole; neither means an exact trim goes on inside n. The engine's
// trim and TrimApprox (which the tests hold against real Redis) share it.
func trimStep(n *Node, length, deleted, maxlen int64, minid *ID, limit int64) (stop, whole bool) {
	if minid == nil && length <= maxlen {
		return true, false
	}
	if limit != 0 && deleted+n.Count > limit {
		return true, false
	}
	if minid == nil {
		return false, length-n.Count >= maxlen
	}
	// The node's last entry counts even when it is flagged deleted.
	return false, idLessForNode(n.Last, *minid)
}

// DefaultTrimLimit is the LIMIT Redis 7.0 applies to MAXLEN ~ / MINID ~ when
// the command gives none: 100 nodes' worth of stream-node-max-entries,
// clamped to [10000, 1000000] at the edges (0 entries means 10000). Exact
// trims, and commands from a master or the AOF, use no limit (0).
func DefaultTrimLimit(maxEntries int64) int64 {
	if maxEntries > 1000000/100 {
		return 1000000
	}
	l := 100 * maxEntries
	if l <= 0 {
		return 10000
	}
	return l
}

// idLessForNode orders stream IDs; kept local so this file does not depend
// on methods the ID type may or may not grow.
func idLessForNode(a, b ID) bool {
	return a.Ms < b.Ms || (a.Ms == b.Ms && a.Seq < b.Seq)
}

// entrySize is the listpack bytes one entry adds. The ID deltas are
// computed in uint64 and stored as int64, as Redis does, so a seq below the
// master's seq becomes a small negative number.
func entrySize(master, id ID, fields, values [][]byte, same bool) int64 {
	flags := int64(0)
	if same {
		flags = flagSameFields
	}
	nf := int64(len(values))
	b := lpIntElemSize(flags)
	b += lpIntElemSize(int64(id.Ms - master.Ms))
	b += lpIntElemSize(int64(id.Seq - master.Seq))
	lpCount := nf + 3
	if !same {
		b += lpIntElemSize(nf)
		for _, f := range fields {
			b += lpStrElemSize(f)
		}
		lpCount += nf + 1
	}
	for _, v := range values {
		b += lpStrElemSize(v)
	}
	b += lpIntElemSize(lpCount)
	return b
}

func sameFields(master, fields [][]byte) bool {
	if len(master) != len(fields) {
		return false
	}
	for i := range master {
		if string(master[i]) != string(fields[i]) {
			return false
		}
	}
	return true
}

func cloneFields(fields [][]byte) [][]byte {
	out := make([][]byte, len(fields))
	for i, f := range fields {
		out[i] = append([]byte{}, f...)
	}
	return out
}

// lpIntEncSize is the size of an integer element's encoding+data part.
func lpIntEncSize(v int64) int64 {
	switch {
	case v >= 0 && v <= 127:
		return 1 // 7-bit uint
	case v >= -4096 && v <= 4095:
		return 2 // 13-bit int
	case v >= -32768 && v <= 32767:
		return 3 // 16-bit int
	case v >= -8388608 && v <= 8388607:
		return 4 // 24-bit int
	case v >= -2147483648 && v <= 2147483647:
		return 5 // 32-bit int
	default:
		return 9 // 64-bit int
	}
}

// lpBacklenSize is the size of the trailing back-length of an element whose
// encoding+data part is l bytes.
func lpBacklenSize(l int64) int64 {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	default:
		return 5
	}
}

func lpIntElemSize(v int64) int64 {
	e := lpIntEncSize(v)
	return e + lpBacklenSize(e)
}

// lpStrElemSize is the full element size of s, which listpack stores as an
// integer when s is the canonical decimal form of an int64.
func lpStrElemSize(s []byte) int64 {
	if v, ok := ParseInt(s); ok {
		return lpIntElemSize(v)
	}
	var e int64
	switch l := int64(len(s)); {
	case l < 64:
		e = 1 + l // 6-bit length
	case l < 4096:
		e = 2 + l // 12-bit length
	default:
		e = 5 + l // 32-bit length
	}
	return e + lpBacklenSize(e)
}

// ParseInt accepts exactly what Redis's string2ll accepts: an optional
// '-', then decimal digits without a leading zero ("0" alone is fine,
// "-0", "+1", " 1" and "01" are not), within int64. These are also the
// strings a listpack stores as integers: those that print back the same.
// XADD sizes every field and value with it, so it parses by hand
// (FuzzParseInt holds it to strconv).
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	if len(digits) == 0 || digits[0] < '1' || digits[0] > '9' {
		// "0" is the only number that starts with a zero.
		if len(b) == 1 && b[0] == '0' {
			return 0, true
		}
		return 0, false
	}
	var v uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}
