package stream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"7", 7, true},
		{"-7", -7, true},
		{"9223372036854775807", 1<<63 - 1, true},
		{"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"-0", 0, false},
		{"00", 0, false},
		{"01", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1.0", 0, false},
		{"0x1", 0, false},
		{"12a", 0, false},
	}
	for _, tc := range tests {
		got, ok := ParseInt([]byte(tc.in))
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzParseInt holds the hand parser to the definition: the
// strings that strconv parses as an int64 and prints back the same.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "01", "-1", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "18446744073709551616", "99999999999999999999", "-", "+1", "1a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := strconv.ParseInt(s, 10, 64)
		wantOK := err == nil && strconv.FormatInt(want, 10) == s
		if !wantOK {
			want = 0
		}
		got, ok := ParseInt([]byte(s))
		if got != want || ok != wantOK {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", s, got, ok, want, wantOK)
		}
	})
}

func TestLpStrElemSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"", 2},                      // 6-bit string, length 0
		{"a", 3},                     // 6-bit string
		{"0", 2},                     // 7-bit uint
		{"127", 2},                   // 7-bit uint
		{"128", 3},                   // 13-bit int
		{"-1", 3},                    // 13-bit int
		{"4095", 3},                  // 13-bit int
		{"-4096", 3},                 // 13-bit int
		{"4096", 4},                  // 16-bit int
		{"-4097", 4},                 // 16-bit int
		{"32767", 4},                 // 16-bit int
		{"32768", 5},                 // 24-bit int
		{"8388607", 5},               // 24-bit int
		{"-8388609", 6},              // 32-bit int
		{"2147483647", 6},            // 32-bit int
		{"2147483648", 10},           // 64-bit int
		{"-9223372036854775808", 10}, // 64-bit int
		{"9223372036854775808", 21},  // too big: 6-bit string of 19 bytes
		{"-0", 4},                    // not canonical: string
		{strings.Repeat("x", 63), 65},
		{strings.Repeat("x", 64), 67},       // 12-bit string
		{strings.Repeat("x", 125), 128},     // encoding 127 bytes: 1-byte backlen
		{strings.Repeat("x", 126), 130},     // encoding 128 bytes: 2-byte backlen
		{strings.Repeat("x", 4095), 4099},   // 12-bit string
		{strings.Repeat("x", 4096), 4103},   // 32-bit string
		{strings.Repeat("x", 16377), 16384}, // encoding 16382: 2-byte backlen
		{strings.Repeat("x", 16378), 16386}, // encoding 16383: 3-byte backlen
	}
	for _, tc := range tests {
		if got := lpStrElemSize([]byte(tc.in)); got != tc.want {
			t.Errorf("lpStrElemSize(%.20q… len %d) = %d, want %d", tc.in, len(tc.in), got, tc.want)
		}
	}
}

func TestNodeBytes(t *testing.T) {
	// Sizes read back from redis-server 7.0 with DUMP.
	n := NewNode(ID{1, 1}, bs("a"), bs("1"))
	if n.Bytes != 28 || n.Count != 1 || n.Deleted != 0 || n.Last != (ID{1, 1}) {
		t.Fatalf("NewNode = %+v, want 28 bytes, count 1", n)
	}
	n.Append(ID{1, 2}, bs("a"), bs("2"))
	if n.Bytes != 38 {
		t.Fatalf("after same-fields append: %d bytes, want 38", n.Bytes)
	}
	before := n.Bytes
	n.Append(ID{1, 3}, bs("b"), bs("2"))
	// flags, ms, seq, num-fields, 2, lp-count take 2 bytes each, "b" 3.
	if got := n.Bytes - before; got != 15 {
		t.Fatalf("different-fields append added %d bytes, want 15", got)
	}
	// A new ms with a smaller seq stores seq-delta as a negative number.
	m := NewNode(ID{5, 100}, bs("a"), bs("x"))
	before = m.Bytes
	m.Append(ID{6, 0}, bs("a"), bs("x"))
	if got := m.Bytes - before; got != 12 { // -100 takes a 13-bit int: 3 bytes
		t.Fatalf("append with seq below master added %d bytes, want 12", got)
	}
}

func TestNodeCountersGrow(t *testing.T) {
	n := NewNode(ID{1, 0}, bs("f"), bs("v"))
	per := func() int64 {
		b := n.Bytes
		n.Append(ID{1, 0}, bs("f"), bs("v")) // zero deltas keep the entry size fixed
		return n.Bytes - b
	}
	for n.Count < 127 {
		per()
	}
	base := per() - 1 // count 127 -> 128: the count element grows by one byte
	for n.Count < 200 {
		if got := per(); got != base {
			t.Fatalf("count %d: append added %d, want %d", n.Count, got, base)
		}
	}
	b := n.Bytes
	n.Delete(ID{1, 3}, nil, nil)
	// count 200 -> 199 keeps its size; deleted 0 -> 1 too.
	if n.Bytes != b || n.Count != 199 || n.Deleted != 1 {
		t.Fatalf("Delete: %+v (bytes before %d)", n, b)
	}
	for n.Count > 127 {
		n.Delete(ID{}, nil, nil)
	}
	if want := b - 1; n.Bytes != want { // count shrank a byte, deleted (73) kept its size
		t.Fatalf("after deletes: bytes %d, want %d (deleted %d)", n.Bytes, want, n.Deleted)
	}
}

func TestNodeAccepts(t *testing.T) {
	n := NewNode(ID{1, 0}, bs("f"), bs("v")) // 29 bytes
	tests := []struct {
		name   string
		fields [][]byte
		values [][]byte
		lim    NodeLimits
		want   bool
	}{
		{"no limits", bs("f"), bs("v"), NodeLimits{}, true},
		{"bytes+raw below max", bs("f"), bs("v"), NodeLimits{MaxBytes: 32}, true},
		{"bytes+raw reaching max", bs("f"), bs("v"), NodeLimits{MaxBytes: 31}, false},
		{"raw counts bytes not encoding", bs("f"), bs("1234"), NodeLimits{MaxBytes: 34}, false},
		{"entries below max", bs("f"), bs("v"), NodeLimits{MaxEntries: 2}, true},
		{"entries at max", bs("f"), bs("v"), NodeLimits{MaxEntries: 1}, false},
		{"max bytes above cap is capped", bs("f"), bs("v"), NodeLimits{MaxBytes: 1 << 40}, true},
	}
	for _, tc := range tests {
		if got := n.Accepts(tc.fields, tc.values, tc.lim); got != tc.want {
			t.Errorf("%s: Accepts = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Deleted entries still count against stream-node-max-entries.
	n.Append(ID{1, 1}, bs("f"), bs("v"))
	n.Delete(ID{1, 1}, bs("f"), bs("v"))
	if n.Accepts(bs("f"), bs("v"), NodeLimits{MaxEntries: 2}) {
		t.Errorf("node with 1 live + 1 deleted accepted a third entry at max-entries 2")
	}
	// stream-node-max-bytes 0 still caps a node at 1 GiB.
	big := Node{Bytes: streamListpackMaxSize - 10}
	if big.Accepts(bs("f"), [][]byte{make([]byte, 9)}, NodeLimits{}) {
		t.Errorf("node at the listpack size cap accepted more")
	}
}

func TestNodeBinaryRoundTrip(t *testing.T) {
	nodes := []Node{
		NewNode(ID{0, 1}, bs("a", "", "1"), bs("x", "y", "z")),
		{Master: ID{^uint64(0), ^uint64(0)}, Last: ID{^uint64(0), ^uint64(0)}, Count: 1 << 40, Deleted: 3, Bytes: 1 << 30},
		{Master: ID{5, 6}, Fields: [][]byte{}, Count: 0, Deleted: 7, Bytes: 99, Last: ID{9, 0}},
	}
	for _, n := range nodes {
		enc := n.AppendBinary([]byte("prefix"))
		if !bytes.HasPrefix(enc, []byte("prefix")) || enc[6] != nodeEncodingV2 {
			t.Fatalf("AppendBinary did not append a versioned record: %x", enc)
		}
		got, err := DecodeNode(enc[6:])
		if err != nil {
			t.Fatalf("DecodeNode: %v", err)
		}
		if got.Master != n.Master || got.Last != n.Last || got.Count != n.Count ||
			got.Deleted != n.Deleted || got.Bytes != n.Bytes || !sameFields(got.Fields, n.Fields) {
			t.Fatalf("round trip: got %+v, want %+v", got, n)
		}
		for i := range enc[6:] {
			if _, err := DecodeNode(enc[6 : 6+i]); !errors.Is(err, ErrNodeEncoding) {
				t.Fatalf("truncated to %d bytes: err %v", i, err)
			}
		}
		if _, err := DecodeNode(append(enc[6:], 0)); !errors.Is(err, ErrNodeEncoding) {
			t.Fatalf("trailing byte accepted: %v", err)
		}
	}
	enc := nodes[0].AppendBinary(nil)
	got, _ := DecodeNode(enc)
	enc[len(enc)-1] = 'Q'
	if string(got.Fields[2]) != "1" {
		t.Fatalf("decoded fields alias the input")
	}
	if _, err := DecodeNode([]byte{2, 0, 0}); !errors.Is(err, ErrNodeEncoding) {
		t.Fatalf("unknown version accepted: %v", err)
	}
}

func TestTrimApprox(t *testing.T) {
	mk := func(count int64, first, last uint64) Node {
		return Node{Master: ID{first, 0}, Count: count, Last: ID{last, 0}}
	}
	nodes := []Node{mk(10, 1, 10), mk(10, 11, 20), mk(5, 21, 30), mk(10, 31, 40)}
	id := func(ms uint64) *ID { return &ID{ms, 0} }
	tests := []struct {
		name   string
		length int64
		maxlen int64
		minid  *ID
		limit  int64
		want   int
	}{
		{"already short", 35, 35, nil, 0, 0},
		{"head node too big to drop", 35, 30, nil, 0, 0},
		{"drop exactly one", 35, 25, nil, 0, 1},
		{"drop three", 35, 10, nil, 0, 3},
		{"never below maxlen", 35, 0, nil, 0, 4},
		{"limit stops before exceeding", 35, 0, nil, 25, 3},
		{"limit smaller than head", 35, 0, nil, 9, 0},
		{"minid below everything", 35, 0, id(1), 0, 0},
		{"minid inside first node", 35, 0, id(10), 0, 0},
		{"minid past first node", 35, 0, id(11), 0, 1},
		{"minid past all", 35, 0, id(41), 0, 4},
		{"minid with limit", 35, 0, id(41), 20, 2},
	}
	for _, tc := range tests {
		if got := TrimApprox(nodes, tc.length, tc.maxlen, tc.minid, tc.limit); got != tc.want {
			t.Errorf("%s: TrimApprox = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestDefaultTrimLimit(t *testing.T) {
	for _, tc := range []struct{ in, want int64 }{
		{0, 10000}, {1, 100}, {100, 10000}, {10000, 1000000}, {10001, 1000000}, {1 << 62, 1000000},
	} {
		if got := DefaultTrimLimit(tc.in); got != tc.want {
			t.Errorf("DefaultTrimLimit(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// ---------------------------------------------------------------------------
// Differential test against a real redis-server.
// ---------------------------------------------------------------------------

// testRedis is a redis-server started for one test.
type testRedis struct {
	*redis.Client
	exited chan struct{} // closed once the server's output ends
	mu     sync.Mutex
	log    strings.Builder // the server's log, shown when the test fails
}

// fatalf fails the test, unless redis-server itself crashed: 7.0.15 has a
// use-after-free in streamAppendItem (the new node's listpack pointer is not
// re-inserted when its final address equals the old tail's pre-shrink
// address), which small stream-node-max-bytes settings can hit. That is an
// upstream bug Eddy does not reproduce, so the test is skipped with the log.
func (r *testRedis) fatalf(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if r.Ping(context.Background()).Err() != nil {
		select {
		case <-r.exited:
		case <-time.After(10 * time.Second):
		}
		r.mu.Lock()
		log := r.log.String()
		r.mu.Unlock()
		if strings.Contains(log, "REDIS BUG REPORT") {
			t.Skipf("redis-server crashed (upstream bug) after: %s\n%s", msg, log)
		}
	}
	t.Fatal(msg)
}

// startRedis starts redis-server on a free loopback port; the test is
// skipped when redis-server is not installed.
func startRedis(t *testing.T) *testRedis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	for attempt := 0; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", t.TempDir(),
			"--rdbcompression", "no") // DUMP then carries raw listpacks
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := &testRedis{exited: make(chan struct{})}
		ready := make(chan bool, 1)
		go func() {
			defer close(r.exited)
			sc := bufio.NewScanner(out)
			ok := false
			for sc.Scan() {
				r.mu.Lock()
				r.log.WriteString(sc.Text() + "\n")
				r.mu.Unlock()
				if !ok && strings.Contains(sc.Text(), "Ready to accept connections") {
					ok = true
					ready <- true
				}
			}
			if !ok {
				ready <- false // exited, e.g. the port was taken meanwhile
			}
		}()
		var up bool
		select {
		case up = <-ready:
		case <-time.After(20 * time.Second):
		}
		if !up {
			_ = cmd.Process.Kill()
			<-r.exited
			_ = cmd.Wait()
			if attempt < 3 {
				continue
			}
			t.Fatalf("redis-server did not start:\n%s", r.log.String())
		}
		r.Client = redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Protocol: 2})
		t.Cleanup(func() {
			r.Close()
			_ = cmd.Process.Kill()
			<-r.exited
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("redis-server log:\n%s", r.log.String())
			}
		})
		return r
	}
}

// modelStream drives Nodes the way t_stream.c drives listpacks, keeping
// per-node entries only so the test can pick IDs and mark deletions.
type modelStream struct {
	nodes  []Node
	ents   [][]modelEntry
	length int64
}

type modelEntry struct {
	id             ID
	fields, values [][]byte
	deleted        bool
}

func (m *modelStream) add(id ID, fields, values [][]byte, lim NodeLimits) {
	last := len(m.nodes) - 1
	if last < 0 || !m.nodes[last].Accepts(fields, values, lim) {
		m.nodes = append(m.nodes, NewNode(id, fields, values))
		m.ents = append(m.ents, nil)
		last++
	} else {
		m.nodes[last].Append(id, fields, values)
	}
	m.ents[last] = append(m.ents[last], modelEntry{id: id, fields: fields, values: values})
	m.length++
}

func (m *modelStream) dropHead(k int) int64 {
	var n int64
	for _, nd := range m.nodes[:k] {
		n += nd.Count
	}
	m.nodes, m.ents = m.nodes[k:], m.ents[k:]
	m.length -= n
	return n
}

func (m *modelStream) xdel(id ID) int64 {
	for i := range m.ents {
		for j := range m.ents[i] {
			e := &m.ents[i][j]
			if e.id != id || e.deleted {
				continue
			}
			e.deleted = true
			m.length--
			m.nodes[i].Delete(id, e.fields, e.values)
			if m.nodes[i].Count == 0 { // streamIteratorRemoveEntry frees the node
				m.nodes = slices.Delete(m.nodes, i, i+1)
				m.ents = slices.Delete(m.ents, i, i+1)
			}
			return 1
		}
	}
	return 0
}

func (m *modelStream) trimApprox(maxlen int64, minid *ID, limit int64) int64 {
	return m.dropHead(TrimApprox(m.nodes, m.length, maxlen, minid, limit))
}

// trimExact follows streamTrim without '~': whole nodes first, then entries
// of the first node that cannot go whole are flagged deleted.
func (m *modelStream) trimExact(maxlen int64, minid *ID) int64 {
	var deleted int64
	for len(m.nodes) > 0 {
		if minid == nil && m.length <= maxlen {
			break
		}
		if TrimApprox(m.nodes[:1], m.length, maxlen, minid, 0) == 1 {
			deleted += m.dropHead(1)
			continue
		}
		for j := range m.ents[0] {
			e := &m.ents[0][j]
			if minid == nil && m.length <= maxlen || minid != nil && !idLessForNode(e.id, *minid) {
				break
			}
			if !e.deleted {
				e.deleted = true
				m.length--
				deleted++
				m.nodes[0].Delete(e.id, e.fields, e.values)
			}
		}
		break
	}
	return deleted
}

// compare checks the model against XINFO STREAM and the listpacks in DUMP.
func (m *modelStream) compare(ctx context.Context, t *testing.T, rdb *testRedis, key, step string) {
	t.Helper()
	info, err := rdb.XInfoStream(ctx, key).Result()
	if err != nil {
		rdb.fatalf(t, "%s: XINFO: %v", step, err)
	}
	keys := make([][16]byte, len(m.nodes))
	for i, n := range m.nodes {
		keys[i] = RaxKey(n.Master)
	}
	if info.Length != m.length || info.RadixTreeKeys != int64(len(m.nodes)) || uint64(info.RadixTreeNodes) != RaxNodes(keys) {
		rdb.fatalf(t, "%s: redis length/keys/nodes %d/%d/%d, model %d/%d/%d", step,
			info.Length, info.RadixTreeKeys, info.RadixTreeNodes, m.length, len(m.nodes), RaxNodes(keys))
	}
	dump, err := rdb.Dump(ctx, key).Result()
	if err != nil {
		rdb.fatalf(t, "%s: DUMP: %v", step, err)
	}
	lps, err := dumpListpacks([]byte(dump))
	if err != nil {
		rdb.fatalf(t, "%s: %v", step, err)
	}
	if len(lps) != len(m.nodes) {
		rdb.fatalf(t, "%s: DUMP has %d listpacks, model %d nodes", step, len(lps), len(m.nodes))
	}
	for i, lp := range lps {
		got, err := decodeStreamListpack(lp.key, lp.lp)
		if err != nil {
			rdb.fatalf(t, "%s: node %d: %v", step, i, err)
		}
		want := m.nodes[i]
		if got.Master != want.Master || got.Bytes != want.Bytes || got.Count != want.Count ||
			got.Deleted != want.Deleted || got.Last != want.Last || !sameFields(got.Fields, want.Fields) {
			rdb.fatalf(t, "%s: node %d: redis %+v, model %+v", step, i, got, want)
		}
	}
}

type dumpedListpack struct {
	key [16]byte
	lp  []byte
}

// dumpListpacks reads the node list at the start of a stream DUMP payload
// (RDB_TYPE_STREAM_LISTPACKS*: count, then key and listpack strings).
func dumpListpacks(b []byte) ([]dumpedListpack, error) {
	if len(b) == 0 || (b[0] != 15 && b[0] != 19 && b[0] != 21) {
		return nil, fmt.Errorf("DUMP payload is not a stream: % x", b[:min(len(b), 4)])
	}
	b = b[1:]
	n, b, err := rdbLen(b)
	if err != nil {
		return nil, err
	}
	out := make([]dumpedListpack, 0, n)
	for ; n > 0; n-- {
		var k, lp []byte
		if k, b, err = rdbString(b); err != nil {
			return nil, err
		}
		if lp, b, err = rdbString(b); err != nil {
			return nil, err
		}
		if len(k) != 16 {
			return nil, fmt.Errorf("rax key of %d bytes", len(k))
		}
		out = append(out, dumpedListpack{key: [16]byte(k), lp: lp})
	}
	return out, nil
}

func rdbLen(b []byte) (uint64, []byte, error) {
	if len(b) == 0 {
		return 0, nil, errors.New("short RDB length")
	}
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0] & 0x3f), b[1:], nil
	case 1:
		if len(b) < 2 {
			return 0, nil, errors.New("short RDB length")
		}
		return uint64(b[0]&0x3f)<<8 | uint64(b[1]), b[2:], nil
	}
	switch {
	case b[0] == 0x80 && len(b) >= 5:
		return uint64(binary.BigEndian.Uint32(b[1:])), b[5:], nil
	case b[0] == 0x81 && len(b) >= 9:
		return binary.BigEndian.Uint64(b[1:]), b[9:], nil
	}
	return 0, nil, fmt.Errorf("unsupported RDB length byte %#x (compressed?)", b[0])
}

func rdbString(b []byte) ([]byte, []byte, error) {
	n, b, err := rdbLen(b)
	if err != nil {
		return nil, nil, err
	}
	if uint64(len(b)) < n {
		return nil, nil, errors.New("short RDB string")
	}
	return b[:n], b[n:], nil
}

// lpElem is one decoded listpack element.
type lpElem struct {
	isInt bool
	i     int64
	s     []byte
}

// lpElems decodes a listpack completely, checking its header and backlens.
func lpElems(lp []byte) ([]lpElem, error) {
	if len(lp) < lpHeaderSize+lpEOFSize || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != 0xff {
		return nil, errors.New("bad listpack header or terminator")
	}
	p := lp[lpHeaderSize : len(lp)-1]
	var out []lpElem
	for len(p) > 0 {
		var e lpElem
		var enc int
		b0 := p[0]
		need := func(n int) error {
			if len(p) < n {
				return errors.New("truncated listpack element")
			}
			return nil
		}
		signExt := func(v uint64, bits uint) int64 { return int64(v<<(64-bits)) >> (64 - bits) }
		var err error
		switch {
		case b0&0x80 == 0:
			e, enc = lpElem{isInt: true, i: int64(b0)}, 1
		case b0&0xc0 == 0x80:
			l := int(b0 & 0x3f)
			if err = need(1 + l); err == nil {
				e, enc = lpElem{s: p[1 : 1+l]}, 1+l
			}
		case b0&0xe0 == 0xc0:
			if err = need(2); err == nil {
				e, enc = lpElem{isInt: true, i: signExt(uint64(b0&0x1f)<<8|uint64(p[1]), 13)}, 2
			}
		case b0&0xf0 == 0xe0:
			if err = need(2); err == nil {
				l := int(b0&0x0f)<<8 | int(p[1])
				if err = need(2 + l); err == nil {
					e, enc = lpElem{s: p[2 : 2+l]}, 2+l
				}
			}
		case b0 == 0xf0:
			if err = need(5); err == nil {
				l := int(binary.LittleEndian.Uint32(p[1:]))
				if err = need(5 + l); err == nil {
					e, enc = lpElem{s: p[5 : 5+l]}, 5+l
				}
			}
		case b0 >= 0xf1 && b0 <= 0xf4:
			width := map[byte]int{0xf1: 2, 0xf2: 3, 0xf3: 4, 0xf4: 8}[b0]
			if err = need(1 + width); err == nil {
				var v uint64
				for k := width; k >= 1; k-- {
					v = v<<8 | uint64(p[k])
				}
				e, enc = lpElem{isInt: true, i: signExt(v, uint(8*width))}, 1+width
			}
		default:
			err = fmt.Errorf("unknown listpack encoding %#x", b0)
		}
		if err != nil {
			return nil, err
		}
		bl := int(lpBacklenSize(int64(enc)))
		if len(p) < enc+bl {
			return nil, errors.New("truncated backlen")
		}
		out = append(out, e)
		p = p[enc+bl:]
	}
	return out, nil
}

// decodeStreamListpack reads a stream node back into a Node: counters and
// master fields from the master entry, Last from the final entry.
func decodeStreamListpack(key [16]byte, lp []byte) (Node, error) {
	el, err := lpElems(lp)
	if err != nil {
		return Node{}, err
	}
	master := ID{Ms: binary.BigEndian.Uint64(key[:8]), Seq: binary.BigEndian.Uint64(key[8:])}
	n := Node{Master: master, Bytes: int64(len(lp))}
	pos := 0
	next := func() (lpElem, error) {
		if pos >= len(el) {
			return lpElem{}, errors.New("listpack ends early")
		}
		pos++
		return el[pos-1], nil
	}
	nextInt := func() int64 {
		e, err2 := next()
		if err2 != nil || !e.isInt {
			err = errors.Join(err, errors.New("expected an integer element"), err2)
		}
		return e.i
	}
	elemBytes := func(e lpElem) []byte {
		if e.isInt {
			return []byte(strconv.FormatInt(e.i, 10))
		}
		return append([]byte{}, e.s...)
	}
	n.Count = nextInt()
	n.Deleted = nextInt()
	nf := nextInt()
	for i := int64(0); i < nf && err == nil; i++ {
		e, err2 := next()
		err = err2
		n.Fields = append(n.Fields, elemBytes(e))
	}
	if nextInt() != 0 {
		err = errors.Join(err, errors.New("master entry terminator not 0"))
	}
	for pos < len(el) && err == nil {
		flags := nextInt()
		n.Last = ID{Ms: master.Ms + uint64(nextInt()), Seq: master.Seq + uint64(nextInt())}
		k := nf
		if flags&flagSameFields == 0 {
			k = 2 * nextInt()
		}
		pos += int(k)
		nextInt() // lp-count
	}
	return n, err
}

// TestNodesMatchRedis runs random XADD/XDEL/XTRIM sequences against a real
// redis-server and checks, after every command, radix-tree-keys,
// radix-tree-nodes, the length, and each node's bytes, counters, master
// fields and last ID as read from DUMP.
func TestNodesMatchRedis(t *testing.T) {
	tests := []struct {
		name     string
		maxBytes []int64
		rounds   int
	}{
		{"usual node sizes", []int64{0, 500, 1000, 4096, 20000}, 30},
		// Below ~500 bytes Redis 7.0.15 itself corrupts streams now and then
		// (see testRedis.fatalf), so these get a short run of their own.
		{"tiny nodes", []int64{1, 60, 100, 300}, 4},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rounds, steps := tc.rounds, 250
			if testing.Short() {
				rounds, steps = max(1, rounds/5), 120
			}
			runRedisRounds(t, rand.New(rand.NewPCG(7, uint64(i))), tc.maxBytes, rounds, steps)
		})
	}
}

func runRedisRounds(t *testing.T, rng *rand.Rand, maxBytes []int64, rounds, steps int) {
	rdb := startRedis(t)
	ctx := context.Background()
	for round := 0; round < rounds; round++ {
		key := fmt.Sprintf("s%d", round)
		var lim NodeLimits
		setLimits := func() {
			lim = NodeLimits{
				MaxEntries: []int64{0, 1, 2, 3, 5, 10, 100}[rng.IntN(7)],
				MaxBytes:   maxBytes[rng.IntN(len(maxBytes))],
			}
			for name, v := range map[string]int64{"stream-node-max-entries": lim.MaxEntries, "stream-node-max-bytes": lim.MaxBytes} {
				if err := rdb.ConfigSet(ctx, name, strconv.FormatInt(v, 10)).Err(); err != nil {
					rdb.fatalf(t, "%v", err)
				}
			}
		}
		setLimits()
		m := &modelStream{}
		var all []ID // every ID ever added, for XDEL and MINID picks
		var ms, seq uint64
		fieldSet := bs("a")
		for step := 0; step < steps; step++ {
			desc := ""
			switch op := rng.IntN(100); {
			case op < 62 || len(all) == 0:
				ms, seq = nextTestID(rng, ms, seq)
				id := ID{ms, seq}
				if rng.IntN(4) == 0 {
					fieldSet = randomFields(rng)
				}
				values := make([][]byte, len(fieldSet))
				for i := range values {
					values[i] = randomValue(rng)
				}
				args := []any{"XADD", key}
				trim := rng.IntN(8) == 0
				var trimArgs []any
				var trimFn func()
				if trim {
					trimArgs, trimFn = randomTrim(rng, m, all, lim)
					args = append(args, trimArgs...)
				}
				args = append(args, fmt.Sprintf("%d-%d", id.Ms, id.Seq))
				for i := range fieldSet {
					args = append(args, fieldSet[i], values[i])
				}
				if err := rdb.Do(ctx, args...).Err(); err != nil {
					rdb.fatalf(t, "%v: %v", args[:min(len(args), 8)], err)
				}
				m.add(id, fieldSet, values, lim)
				if trim {
					trimFn()
				}
				all = append(all, id)
				desc = fmt.Sprintf("XADD %v %v", id, trimArgs)
			case op < 76:
				id := all[rng.IntN(len(all))]
				got, err := rdb.XDel(ctx, key, fmt.Sprintf("%d-%d", id.Ms, id.Seq)).Result()
				if err != nil {
					rdb.fatalf(t, "%v", err)
				}
				if want := m.xdel(id); got != want {
					rdb.fatalf(t, "XDEL %v: redis %d, model %d", id, got, want)
				}
				desc = fmt.Sprintf("XDEL %v", id)
			case op < 97:
				trimArgs, _ := randomTrim(rng, m, all, lim)
				var want int64
				// Re-derive what the model does for these arguments.
				want = applyTrimArgs(m, trimArgs, lim)
				got, err := rdb.Do(ctx, append([]any{"XTRIM", key}, trimArgs...)...).Int64()
				if err != nil {
					rdb.fatalf(t, "XTRIM %v: %v", trimArgs, err)
				}
				if got != want {
					rdb.fatalf(t, "round %d step %d: XTRIM %v removed %d, model %d", round, step, trimArgs, got, want)
				}
				desc = fmt.Sprintf("XTRIM %v", trimArgs)
			default:
				setLimits()
				desc = fmt.Sprintf("limits %+v", lim)
			}
			m.compare(ctx, t, rdb, key, fmt.Sprintf("round %d step %d (%s, %+v)", round, step, desc, lim))
		}
	}
}

// randomTrim returns XTRIM/XADD trim arguments and a func applying them to
// the model (used for XADD, where Redis reports nothing to compare).
func randomTrim(rng *rand.Rand, m *modelStream, all []ID, lim NodeLimits) ([]any, func()) {
	var args []any
	approx := rng.IntN(4) != 0
	if rng.IntN(2) == 0 {
		args = append(args, "MAXLEN")
		if approx {
			args = append(args, "~")
		} else if rng.IntN(2) == 0 {
			args = append(args, "=")
		}
		args = append(args, strconv.FormatInt(rng.Int64N(m.length+3), 10))
	} else {
		args = append(args, "MINID")
		if approx {
			args = append(args, "~")
		}
		id := ID{}
		if len(all) > 0 {
			id = all[rng.IntN(len(all))]
			if rng.IntN(3) == 0 {
				id.Seq++
			}
		}
		args = append(args, fmt.Sprintf("%d-%d", id.Ms, id.Seq))
	}
	if approx && rng.IntN(2) == 0 {
		args = append(args, "LIMIT", strconv.Itoa(rng.IntN(40)))
	}
	return args, func() { applyTrimArgs(m, args, lim) }
}

// applyTrimArgs parses arguments made by randomTrim and trims the model.
func applyTrimArgs(m *modelStream, args []any, lim NodeLimits) int64 {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = a.(string)
	}
	approx := s[1] == "~"
	i := 1
	if s[1] == "~" || s[1] == "=" {
		i = 2
	}
	var maxlen int64
	var minid *ID
	if s[0] == "MAXLEN" {
		maxlen, _ = strconv.ParseInt(s[i], 10, 64)
	} else {
		var id ID
		fmt.Sscanf(s[i], "%d-%d", &id.Ms, &id.Seq)
		minid = &id
	}
	if !approx {
		return m.trimExact(maxlen, minid)
	}
	limit := DefaultTrimLimit(lim.MaxEntries)
	if len(s) > i+2 && s[i+1] == "LIMIT" {
		limit, _ = strconv.ParseInt(s[i+2], 10, 64)
	}
	return m.trimApprox(maxlen, minid, limit)
}

func randomFields(rng *rand.Rand) [][]byte {
	pools := [][][]byte{bs("a"), bs("a", "b"), bs("temp", "hum", "x"), bs("1", "2"), bs("", "e"), bs("f"), bs("-5", "007")}
	if rng.IntN(3) > 0 {
		return pools[rng.IntN(len(pools))]
	}
	n := 1 + rng.IntN(5)
	out := make([][]byte, n)
	for i := range out {
		out[i] = randomValue(rng)
		if len(out[i]) > 100 {
			out[i] = out[i][:rng.IntN(100)]
		}
	}
	return out
}

func randomValue(rng *rand.Rand) []byte {
	ints := []string{"0", "1", "127", "128", "-1", "4095", "4096", "-4096", "-4097", "32767", "32768",
		"-32768", "-32769", "8388607", "8388608", "-8388608", "-8388609", "2147483647", "2147483648",
		"-2147483648", "-2147483649", "9223372036854775807", "-9223372036854775808", "9223372036854775808"}
	odd := []string{"", "01", "-0", "+1", " 1", "1 ", "1.5", "0x10", "-", "00", "abc"}
	lengths := []int{1, 5, 62, 63, 64, 65, 125, 126, 127, 128, 300}
	switch k := rng.IntN(100); {
	case k < 30:
		return []byte(ints[rng.IntN(len(ints))])
	case k < 40:
		return []byte(strconv.FormatInt(rng.Int64()>>rng.IntN(64), 10))
	case k < 55:
		return []byte(odd[rng.IntN(len(odd))])
	case k < 95:
		return bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, lengths[rng.IntN(len(lengths))])
	case k < 99:
		return bytes.Repeat([]byte("z"), []int{4094, 4095, 4096, 4097}[rng.IntN(4)])
	default:
		return bytes.Repeat([]byte("y"), []int{16377, 16378, 20000}[rng.IntN(3)])
	}
}

// TestNodeCountersMatchRedis grows one node past the 7-bit and 13-bit
// integer boundaries of its count and deleted counters (appends, XDEL, an
// exact trim) and compares the model with redis-server at each crossing.
func TestNodeCountersMatchRedis(t *testing.T) {
	rdb := startRedis(t)
	ctx := context.Background()
	for _, kv := range [][2]string{{"stream-node-max-entries", "0"}, {"stream-node-max-bytes", "0"}} {
		if err := rdb.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			rdb.fatalf(t, "%v", err)
		}
	}
	const key = "big"
	m := &modelStream{}
	checkpoints := map[int]bool{1: true, 127: true, 128: true, 129: true, 4095: true, 4096: true, 4097: true, 4300: true}
	pipe := rdb.Pipeline()
	for i := 1; i <= 4300; i++ {
		id := ID{Ms: 1000 + uint64(i/3), Seq: uint64(i % 3)}
		fields, values := bs("f"), bs(strconv.Itoa(i))
		if i%7 == 0 {
			fields = bs("g", "h")
			values = bs("x", "")
		}
		args := []any{"XADD", key, fmt.Sprintf("%d-%d", id.Ms, id.Seq)}
		for j := range fields {
			args = append(args, fields[j], values[j])
		}
		pipe.Do(ctx, args...)
		m.add(id, fields, values, NodeLimits{})
		if checkpoints[i] {
			if _, err := pipe.Exec(ctx); err != nil {
				rdb.fatalf(t, "%v", err)
			}
			m.compare(ctx, t, rdb, key, fmt.Sprintf("after %d appends", i))
		}
	}
	deleted := 0
	for i := 2; i <= 4300; i++ {
		if i%5 == 0 {
			continue // keep some live entries so the node survives
		}
		id := ID{Ms: 1000 + uint64(i/3), Seq: uint64(i % 3)}
		pipe.XDel(ctx, key, fmt.Sprintf("%d-%d", id.Ms, id.Seq))
		m.xdel(id)
		deleted++
		if deleted == 127 || deleted == 128 || deleted == 4095 || deleted == 4096 {
			if _, err := pipe.Exec(ctx); err != nil {
				rdb.fatalf(t, "%v", err)
			}
			m.compare(ctx, t, rdb, key, fmt.Sprintf("after %d deletes", deleted))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		rdb.fatalf(t, "%v", err)
	}
	m.compare(ctx, t, rdb, key, "after all deletes")
	got, err := rdb.Do(ctx, "XTRIM", key, "MAXLEN", "3").Int64()
	if err != nil {
		rdb.fatalf(t, "%v", err)
	}
	if want := m.trimExact(3, nil); got != want {
		rdb.fatalf(t, "exact XTRIM removed %d, model %d", got, want)
	}
	m.compare(ctx, t, rdb, key, "after exact trim")
}

// BenchmarkLpStrElemSize sizes the fields and values of a typical entry,
// as XADD does for every one (numbers take the integer encoding).
func BenchmarkLpStrElemSize(b *testing.B) {
	elems := [][]byte{[]byte("a"), []byte("1234567890"), []byte("temperature"), []byte("-42"), []byte("hello world")}
	var n int64
	for b.Loop() {
		for _, e := range elems {
			n += lpStrElemSize(e)
		}
	}
	if n == 0 {
		b.Fatal("no sizes")
	}
}
