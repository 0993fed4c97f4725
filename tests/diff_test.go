package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// diffPair is a real redis-server (the reference) and Eddy (the subject),
// each with a control connection used between cases.
type diffPair struct {
	ref, sub       *serverProc
	refCtl, subCtl *rawConn
	dump           bool // EDDY_DIFF_DUMP=1: log every step
}

// newDiffPair starts both servers for one top-level test.
func newDiffPair(t *testing.T) *diffPair {
	t.Helper()
	r := startRedis(t)
	e := startEddy(t)
	return &diffPair{
		ref: r.serverProc, sub: e.serverProc,
		refCtl: r.Raw(), subCtl: e.Raw(),
		dump: os.Getenv("EDDY_DIFF_DUMP") == "1",
	}
}

// diffCase is a list of commands sent in order to both sides, on fresh
// connections, after FLUSHALL. Each line is split by splitArgs; a line
// starting with "@N " goes on the case's N-th connection (default @1), for
// cases that need two clients (WATCH).
type diffCase struct {
	name string
	cmds []string
}

// configDefaults are the values that a case changing configuration gets
// reset to afterwards, so that cases stay independent.
var configDefaults = map[string]string{
	"stream-node-max-entries": "100",
	"stream-node-max-bytes":   "4096",
	"masterauth":              "",
	"masteruser":              "",
}

// run runs each case as a subtest.
func (d *diffPair) run(t *testing.T, cases []diffCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { d.runCase(t, c) })
	}
}

func (d *diffPair) runCase(t *testing.T, c diffCase) {
	d.reset(t)
	var touched []string // config parameters this case sets
	defer func() { d.restoreConfig(t, touched) }()

	s := d.session(t)
	history := make([]string, 0, len(c.cmds))
	for i, line := range c.cmds {
		conn, line := connPrefix(line)
		args, err := splitArgs(line)
		if err != nil {
			t.Fatalf("case %q line %d: %v", c.name, i+1, err)
		}
		if len(args) > 2 && strings.EqualFold(args[0], "CONFIG") && strings.EqualFold(args[1], "SET") {
			for j := 2; j < len(args); j += 2 {
				if _, ok := configDefaults[strings.ToLower(args[j])]; !ok {
					t.Fatalf("case %q sets %s, which has no entry in configDefaults", c.name, args[j])
				}
				touched = append(touched, strings.ToLower(args[j]))
			}
		}
		if notComparable(args) {
			t.Fatalf("case %q line %d: %s replies differ between any two servers; it cannot be in a differential case",
				c.name, i+1, args[0])
		}
		h := quoteArgs(args)
		if conn != 1 {
			h = fmt.Sprintf("@%d %s", conn, h)
		}
		history = append(history, h)
		if msg := s.step(conn, args); msg != "" {
			t.Errorf("case %q, step %d of %d:\n%s\ncommands so far:\n  %s",
				c.name, i+1, len(c.cmds), msg, strings.Join(history, "\n  "))
			return // the two sides may now differ in state; later steps would only add noise
		}
	}
}

// reset empties both servers before a case.
func (d *diffPair) reset(t *testing.T) {
	t.Helper()
	for _, side := range []struct {
		name string
		c    *rawConn
	}{{"redis", d.refCtl}, {"eddy", d.subCtl}} {
		got, err := side.c.Do("FLUSHALL")
		if err != nil || string(got) != "+OK\r\n" {
			t.Fatalf("%s: FLUSHALL = %q, %v", side.name, got, err)
		}
	}
}

func (d *diffPair) restoreConfig(t *testing.T, params []string) {
	t.Helper()
	for _, p := range params {
		for _, c := range []*rawConn{d.refCtl, d.subCtl} {
			if got, err := c.Do("CONFIG", "SET", p, configDefaults[p]); err != nil || string(got) != "+OK\r\n" {
				t.Errorf("restoring %s: %q, %v", p, got, err)
			}
		}
	}
}

// connPrefix splits "@N " off a case line.
func connPrefix(line string) (int, string) {
	if len(line) > 3 && line[0] == '@' && line[1] >= '1' && line[1] <= '9' && line[2] == ' ' {
		return int(line[1] - '0'), line[3:]
	}
	return 1, line
}

// session starts a set of fresh connections: per-connection state (SELECT,
// MULTI, HELLO, WATCH) never leaks from one case into the next.
func (d *diffPair) session(t *testing.T) *diffSession {
	return &diffSession{t: t, d: d, conns: map[int][2]*rawConn{}}
}

// diffSession sends commands to both sides and compares the replies.
type diffSession struct {
	t     *testing.T
	d     *diffPair
	conns map[int][2]*rawConn // by connection number: redis, eddy; opened on first use
}

// step runs one command on connection conn of both sides; it returns ""
// when the replies match, else a readable account of the difference.
func (s *diffSession) step(conn int, args []string) string {
	s.t.Helper()
	pair := s.pair(conn)
	rule := comparatorFor(args)
	refReply, err := rule.do(pair[0], args)
	if err != nil {
		s.t.Fatalf("redis did not answer %s: %v (a broken test case?)", quoteArgs(args), err)
	}
	subReply, subErr := rule.do(pair[1], args)
	if s.d.dump {
		s.t.Logf("@%d> %s\n  redis: %q\n  eddy:  %q", conn, quoteArgs(args), refReply, subReply)
	}
	if subErr != nil {
		return fmt.Sprintf("> %s\nredis: %q\n%s\neddy: no reply: %v",
			quoteArgs(args), refReply, indent(formatReply(refReply)), subErr)
	}
	if rule.equal(refReply, subReply) {
		return ""
	}
	return rule.account(args, refReply, subReply)
}

// pair returns connection conn of both sides (redis, eddy), opening it on
// first use; the case's subtest owns it and closes it when the case ends.
func (s *diffSession) pair(conn int) [2]*rawConn {
	pair, ok := s.conns[conn]
	if !ok {
		pair = [2]*rawConn{dialRaw(s.t, s.d.ref.Addr()), dialRaw(s.t, s.d.sub.Addr())}
		s.conns[conn] = pair
	}
	return pair
}

// account is a readable account of replies to args that differ.
func (r stepRule) account(args []string, ref, sub []byte) string {
	how := ""
	if r.note != "" {
		how = " (compared " + r.note + ")"
	}
	return fmt.Sprintf("> %s%s\nredis: %q\n%s\neddy:  %q\n%s", quoteArgs(args), how,
		ref, indent(formatReply(ref)), sub, indent(formatReply(sub)))
}

func indent(s string) string { return "       " + strings.ReplaceAll(s, "\n", "\n       ") }

// burst sends cmds on connection conn of both sides in one write, so
// that a server reads them together, then reads and compares their
// replies in order. It returns "" when all match, else an account of the
// first difference. Every command's stepRule must be one reply read as
// it comes (pipelined).
func (s *diffSession) burst(conn int, cmds [][]string) string {
	s.t.Helper()
	pair := s.pair(conn)
	var req []byte
	for _, args := range cmds {
		if !comparatorFor(args).pipelined() {
			s.t.Fatalf("%s cannot be pipelined (a broken test?)", quoteArgs(args))
		}
		req = append(req, encodeCommand(args)...)
	}
	var replies [2][][]byte
	for side, c := range pair {
		if err := c.SendRaw(req); err != nil {
			s.t.Fatalf("sending a burst of %d: %v", len(cmds), err)
		}
		for range cmds {
			b, err := c.Read()
			if err != nil && side == 0 {
				s.t.Fatalf("redis did not answer a burst of %d: %v (a broken test case?)", len(cmds), err)
			}
			if err != nil {
				return fmt.Sprintf("eddy did not answer all of a burst of %d: %v", len(cmds), err)
			}
			replies[side] = append(replies[side], b)
		}
	}
	for i, args := range cmds {
		ref, sub := replies[0][i], replies[1][i]
		if s.d.dump {
			s.t.Logf("@%d burst %d/%d> %s\n  redis: %q\n  eddy:  %q", conn, i+1, len(cmds), quoteArgs(args), ref, sub)
		}
		if rule := comparatorFor(args); !rule.equal(ref, sub) {
			return fmt.Sprintf("command %d of a burst of %d\n%s", i+1, len(cmds), rule.account(args, ref, sub))
		}
	}
	return ""
}

// stepRule says how one command is exchanged and compared.
type stepRule struct {
	// exchange sends the command and returns the reply to compare; nil
	// is doArgs, the reply as it comes, which can also be pipelined
	// (burst). The others send more commands or rework the reply.
	exchange func(c *rawConn, args []string) ([]byte, error)
	equal    func(ref, sub []byte) bool
	note     string
}

func (r stepRule) pipelined() bool { return r.exchange == nil }

func (r stepRule) do(c *rawConn, args []string) ([]byte, error) {
	if r.exchange == nil {
		return doArgs(c, args)
	}
	return r.exchange(c, args)
}

// comparatorFor is the one place that decides which replies are not
// compared byte for byte, and why. Everything not listed is exact.
func comparatorFor(args []string) stepRule {
	exact := stepRule{equal: bytes.Equal}
	switch strings.ToUpper(args[0]) {
	case "KEYS":
		// Hash-table order is an implementation detail.
		return stepRule{exchange: sortedReply, equal: bytes.Equal, note: "as a sorted set"}
	case "SCAN":
		// Cursors and batch boundaries are implementation details; the set of
		// keys a full iteration returns is not.
		return stepRule{exchange: scanAll, equal: bytes.Equal, note: "as the sorted union of a full iteration"}
	case "TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME":
		// The clock moves between the two servers' replies.
		return stepRule{equal: closeIntegers, note: "within clock tolerance"}
	case "CONFIG":
		if len(args) > 1 && strings.EqualFold(args[1], "GET") {
			// A pattern's matches come in hash-table order.
			return stepRule{exchange: sortedPairs, equal: bytes.Equal, note: "as sorted name/value pairs"}
		}
	case "HELLO":
		// The reply names the server, its version and a connection id.
		return stepRule{equal: sameShape, note: "by shape"}
	case "XPENDING", "XINFO":
		// Idle times, delivery and seen times are the wall clock.
		if r, ok := groupTimesRule(args); ok {
			return r
		}
	case "XADD":
		if xaddID(args) == "*" {
			// An automatic ID is the wall clock in milliseconds.
			return stepRule{equal: sameIDShape, note: "as stream IDs of any value"}
		}
	}
	return exact
}

// notComparable reports commands whose replies describe the server
// itself (INFO, CLIENT LIST, TIME, ...) rather than the data, and so
// differ between any two servers.
func notComparable(args []string) bool {
	switch strings.ToUpper(args[0]) {
	case "INFO", "CLIENT", "TIME", "LASTSAVE", "DEBUG", "MEMORY", "RANDOMKEY", "SLOWLOG", "LATENCY", "MONITOR", "COMMAND":
		return true
	case "OBJECT":
		return len(args) > 1 && slices.Contains([]string{"IDLETIME", "FREQ"}, strings.ToUpper(args[1]))
	}
	return false
}

func doArgs(c *rawConn, args []string) ([]byte, error) { return c.Do(args...) }

// sortedReply returns the reply with the items of an array reply sorted.
func sortedReply(c *rawConn, args []string) ([]byte, error) {
	b, err := c.Do(args...)
	if err != nil {
		return b, err
	}
	v, err := parseReply(b)
	if err != nil || v.typ != '*' || v.null {
		return b, nil
	}
	slices.SortFunc(v.elems, func(a, b respValue) int { return strings.Compare(a.str, b.str) })
	return appendValue(nil, v), nil
}

// sortedPairs returns the reply with the name/value pairs of an array or
// map reply sorted by name.
func sortedPairs(c *rawConn, args []string) ([]byte, error) {
	b, err := c.Do(args...)
	if err != nil {
		return b, err
	}
	v, err := parseReply(b)
	if err != nil || (v.typ != '*' && v.typ != '%') || len(v.elems)%2 != 0 {
		return b, nil
	}
	pairs := make([][2]respValue, 0, len(v.elems)/2)
	for i := 0; i < len(v.elems); i += 2 {
		pairs = append(pairs, [2]respValue{v.elems[i], v.elems[i+1]})
	}
	slices.SortFunc(pairs, func(a, b [2]respValue) int { return strings.Compare(a[0].str, b[0].str) })
	v.elems = v.elems[:0]
	for _, p := range pairs {
		v.elems = append(v.elems, p[0], p[1])
	}
	return appendValue(nil, v), nil
}

// scanAll follows a SCAN from the given cursor to the end and returns
// `*2 "0" [sorted unique keys]`, or the first reply if it is not a cursor
// reply (an error).
func scanAll(c *rawConn, args []string) ([]byte, error) {
	args = slices.Clone(args)
	seen := map[string]bool{}
	var keys []respValue
	for range 100000 {
		b, err := c.Do(args...)
		if err != nil {
			return b, err
		}
		v, err := parseReply(b)
		if err != nil || v.typ != '*' || len(v.elems) != 2 {
			return b, nil
		}
		for _, k := range v.elems[1].elems {
			if !seen[k.str] {
				seen[k.str] = true
				keys = append(keys, k)
			}
		}
		if v.elems[0].str == "0" {
			slices.SortFunc(keys, func(a, b respValue) int { return strings.Compare(a.str, b.str) })
			return appendValue(nil, respValue{typ: '*', elems: []respValue{
				{typ: '$', str: "0"}, {typ: '*', elems: keys},
			}}), nil
		}
		args[1] = v.elems[0].str
	}
	return nil, errors.New("SCAN did not finish within 100000 calls")
}

// closeIntegers accepts two integer replies that are equal, or both
// positive and within 2% + 2 units of each other (TTL in seconds, PTTL in
// milliseconds: the slack covers a slow round trip under -race).
func closeIntegers(ref, sub []byte) bool {
	if bytes.Equal(ref, sub) {
		return true
	}
	a, errA := parseIntReply(ref)
	b, errB := parseIntReply(sub)
	if errA != nil || errB != nil || a <= 0 || b <= 0 {
		return false
	}
	slack := max(a, b)/50 + 2
	if a > 1e11 { // an absolute time in ms (PEXPIRETIME): allow 2 s
		slack = 2000
	}
	return math.Abs(float64(a-b)) <= float64(slack)
}

func parseIntReply(b []byte) (int64, error) {
	if len(b) < 4 || b[0] != ':' {
		return 0, fmt.Errorf("not an integer reply: %q", b)
	}
	return strconv.ParseInt(string(b[1:len(b)-2]), 10, 64)
}

// sameShape accepts replies of the same type and size (errors must match
// exactly).
func sameShape(ref, sub []byte) bool {
	a, errA := parseReply(ref)
	b, errB := parseReply(sub)
	if errA != nil || errB != nil || a.typ == '-' || b.typ == '-' {
		return bytes.Equal(ref, sub)
	}
	return a.typ == b.typ && len(a.elems) == len(b.elems)
}

var idReply = regexp.MustCompile(`^\$\d+\r\n\d+-\d+\r\n$`)

// sameIDShape accepts two stream IDs, whatever their values; anything else
// must match exactly.
func sameIDShape(ref, sub []byte) bool {
	if idReply.Match(ref) {
		return idReply.Match(sub)
	}
	return bytes.Equal(ref, sub)
}

// xaddID returns the ID argument of an XADD, skipping its options, or ""
// if the command is too short to have one.
func xaddID(args []string) string {
	i := 2
	for i < len(args) {
		switch strings.ToUpper(args[i]) {
		case "NOMKSTREAM":
			i++
			continue
		case "MAXLEN", "MINID":
			i++
			if i < len(args) && (args[i] == "=" || args[i] == "~") {
				i++
			}
			i++
			if i < len(args) && strings.EqualFold(args[i], "LIMIT") {
				i += 2
			}
			continue
		}
		return args[i]
	}
	return ""
}

// splitArgs splits a command line on spaces; a token in double quotes is a
// Go string literal, so `"a b"`, `""` and `"\x00"` are single arguments.
func splitArgs(line string) ([]string, error) {
	var args []string
	for i := 0; i < len(line); {
		switch {
		case line[i] == ' ':
			i++
		case line[i] == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' {
					j++
				}
			}
			if j >= len(line) {
				return nil, fmt.Errorf("unterminated quote in %q", line)
			}
			s, err := strconv.Unquote(line[i : j+1])
			if err != nil {
				return nil, fmt.Errorf("bad quoted argument %s: %w", line[i:j+1], err)
			}
			args = append(args, s)
			i = j + 1
		default:
			j := strings.IndexByte(line[i:], ' ')
			if j < 0 {
				j = len(line) - i
			}
			args = append(args, line[i:i+j])
			i += j
		}
	}
	if len(args) == 0 {
		return nil, errors.New("empty command")
	}
	return args, nil
}

// quoteArgs renders a command for messages, quoting what needs it.
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \"\\") || strconv.Quote(a) != `"`+a+`"` {
			out[i] = strconv.Quote(a)
		} else {
			out[i] = a
		}
		if len(out[i]) > 80 {
			out[i] = out[i][:60] + fmt.Sprintf("...(%d bytes)", len(a))
		}
	}
	return strings.Join(out, " ")
}

// TestDiffProtocol feeds malformed and inline requests to both servers and
// compares everything they send back, and whether they hang up.
func TestDiffProtocol(t *testing.T) {
	t.Parallel()
	d := newDiffPair(t)
	const sentinel = "*2\r\n$4\r\nECHO\r\n$3\r\nEND\r\n"
	cases := []struct {
		name  string
		input string
		open  bool // the server keeps the connection: a sentinel ends the exchange
	}{
		// "|" in an input splits it into separate writes.
		{"bulk length not a number", "*1\r\n$abc\r\n", false},
		{"bulk length over 512MB", "*1\r\n$536870913\r\n", false},
		{"bulk length negative", "*2\r\n$4\r\nECHO\r\n$-1\r\n", false},
		{"multibulk length not a number", "*abc\r\n", false},
		{"multibulk length over INT_MAX", "*2147483648\r\n", false},
		{"item not a bulk string", "*1\r\n+PING\r\n", false},
		{"unbalanced quotes inline", "ECHO \"abc\r\n", false},
		{"inline ping", "PING\r\n", true},
		{"inline with quotes", "ECHO \"a b\\x41\"\r\n", true},
		{"inline empty line", "\r\n", true},
		{"empty multibulk", "*0\r\n", true},
		{"null multibulk", "*-1\r\n", true},
		{"pipelined", "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", true},
		{"command split across writes", "*1\r\n$4\r\nPI|NG\r\n*1\r\n$4|\r\nPING\r|\n", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.input
			if c.open {
				in += sentinel
			}
			ref := protocolTranscript(t, dialRaw(t, d.ref.Addr()), in)
			sub := protocolTranscript(t, dialRaw(t, d.sub.Addr()), in)
			if d.dump {
				t.Logf("input %q\n  redis: %q\n  eddy:  %q", c.input, ref, sub)
			}
			if ref != sub {
				t.Errorf("input %q:\nredis: %q\neddy:  %q", c.input, ref, sub)
			}
		})
	}
}

// protocolTranscript sends input (in several writes where it has "|") and
// returns every reply up to the sentinel's, then how the connection ended.
func protocolTranscript(t *testing.T, c *rawConn, input string) string {
	for _, part := range strings.Split(input, "|") {
		if err := c.SendRaw([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	var out []byte
	for {
		b, err := c.ReadTimeout(2 * time.Second)
		switch {
		case err == nil:
			out = append(out, b...)
			if string(b) == "$3\r\nEND\r\n" {
				return string(out) + "[open]"
			}
		case errors.Is(err, io.EOF), isConnReset(err):
			return string(out) + "[closed]"
		default:
			return string(out) + "[no reply, not closed]"
		}
	}
}
