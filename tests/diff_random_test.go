package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDiffRandom sends a few thousand generated stream, keyspace and string
// commands, valid and invalid, over a small key set to both servers and
// compares every reply. The seed is logged; EDDY_DIFF_SEED replays a run.
func TestDiffRandom(t *testing.T) {
	t.Parallel()
	runRandomDiff(t, false)
}

// TestDiffRandomXInfo is TestDiffRandom with small stream nodes and XINFO
// STREAM [FULL] among the commands, so that node splits, deletions and
// approximate trims are checked against Redis's own bookkeeping. It is
// apart so that a node-accounting difference does not hide other ones.
func TestDiffRandomXInfo(t *testing.T) {
	t.Parallel()
	runRandomDiff(t, true)
}

// TestDiffRandomGroups is TestDiffRandom with consumer-group commands
// (cmdGen.groupCmd, in diff_groups_test.go) mixed in, over fixed group and consumer
// names, so that PELs, delivery counts and entries-read meet XDEL, XTRIM,
// XSETID, RENAME and MULTI.
func TestDiffRandomGroups(t *testing.T) {
	t.Parallel()
	runRandomDiff(t, false, func(g *cmdGen) { g.groups = true })
}

// startRandomDiff starts a random run of n commands (a fifth with
// -short) on a fresh pair of servers. Its seed is EDDY_DIFF_SEED, else
// the clock's.
func startRandomDiff(t *testing.T, n int, opts ...func(*cmdGen)) (uint64, int, *diffSession, *cmdGen) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("EDDY_DIFF_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("EDDY_DIFF_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with EDDY_DIFF_SEED=%d)", seed, seed)
	if testing.Short() {
		n /= 5
	}
	d := newDiffPair(t)
	d.reset(t)
	g := newCmdGen(seed)
	for _, o := range opts {
		o(g)
	}
	return seed, n, d.session(t), g
}

func runRandomDiff(t *testing.T, xinfo bool, opts ...func(*cmdGen)) {
	n := 4000
	if xinfo {
		n = 2000
	}
	seed, n, s, g := startRandomDiff(t, n, opts...)
	var history []string
	if xinfo {
		g.xinfo = true
		// The session's connections are fresh and the servers are this
		// test's own, so the setting needs no restoring.
		history = append(history, "CONFIG SET stream-node-max-entries 4")
		if msg := s.step(1, []string{"CONFIG", "SET", "stream-node-max-entries", "4"}); msg != "" {
			t.Fatal(msg)
		}
	}
	var sent [][]string
	for i := range n {
		args := g.next()
		sent = append(sent, args)
		history = append(history, quoteArgs(args))
		if msg := s.step(1, args); msg != "" {
			failRandomDiff(t, seed, i+1, n, msg, history, sent, g.keys)
		}
	}
}

// failRandomDiff ends a random run that found a difference after command
// i of n, with the commands that led there.
func failRandomDiff(t *testing.T, seed uint64, i, n int, msg string, history []string, sent [][]string, keys []string) {
	t.Helper()
	from := max(0, len(history)-30)
	t.Fatalf("seed %d, command %d of %d:\n%s\nlast %d commands:\n  %s\ncommands naming the same keys:\n  %s",
		seed, i, n, msg, len(history)-from, strings.Join(history[from:], "\n  "),
		strings.Join(sameKeyHistory(sent, keys), "\n  "))
}

// TestDiffRandomPipelined is TestDiffRandomGroups with the commands sent
// in bursts, each in one write. Eddy's event loop runs the writes a
// client sent together as one group commit, and packs the entries a
// group appends to a stream into shared records (stream/records.go),
// which no command sent alone makes. So half the bursts are appends
// (explicit IDs, some with trims) to one or two streams, with an XDEL
// now and then, and the other half what the generator gives; the reads
// that follow meet the packed records, and so do XDEL, XTRIM, the groups'
// reads and claims, and MULTI.
func TestDiffRandomPipelined(t *testing.T) {
	t.Parallel()
	runPipelinedDiff(t, false)
}

// TestDiffRandomPipelinedXInfo is TestDiffRandomPipelined with nodes of at
// most four entries and XINFO STREAM [FULL] among the commands: packed
// records never span two nodes, so the nodes must split, empty and count
// as Redis's do.
func TestDiffRandomPipelinedXInfo(t *testing.T) {
	t.Parallel()
	runPipelinedDiff(t, true)
}

func runPipelinedDiff(t *testing.T, xinfo bool) {
	n := 4000
	if xinfo {
		n = 2000
	}
	seed, n, s, g := startRandomDiff(t, n, func(g *cmdGen) { g.groups = true })
	var history []string
	var sent [][]string
	if xinfo {
		g.xinfo = true
		setting := []string{"CONFIG", "SET", "stream-node-max-entries", "4"}
		history = append(history, quoteArgs(setting))
		if msg := s.step(1, setting); msg != "" {
			t.Fatal(msg)
		}
	}
	for len(sent) < n {
		var cmds [][]string
		if g.chance(0.5) {
			keys := []string{g.streamKey(), g.streamKey()}
			for range 2 + g.r.IntN(30) {
				k := keys[g.r.IntN(len(keys))]
				if g.chance(0.05) {
					cmds = append(cmds, []string{"XDEL", k, g.id(k)})
					continue
				}
				a := []string{"XADD", k}
				if g.chance(0.08) {
					a = append(a, g.trimArgs(k)...)
				}
				a = append(a, g.addID(k))
				cmds = append(cmds, append(a, g.fields()...))
			}
		} else {
			for range 1 + g.r.IntN(12) {
				cmds = append(cmds, g.next())
			}
		}
		// A command whose reply is reworked (KEYS, SCAN, CONFIG GET)
		// goes alone, between the bursts before and after it.
		for len(cmds) > 0 {
			j := slices.IndexFunc(cmds, func(a []string) bool { return !comparatorFor(a).pipelined() })
			burst := cmds
			if j >= 0 {
				burst = cmds[:j]
			}
			for _, a := range burst {
				sent = append(sent, a)
				history = append(history, "(burst) "+quoteArgs(a))
			}
			if len(burst) > 0 {
				if msg := s.burst(1, burst); msg != "" {
					failRandomDiff(t, seed, len(sent), n, msg, history, sent, g.keys)
				}
			}
			if j < 0 {
				break
			}
			sent = append(sent, cmds[j])
			history = append(history, quoteArgs(cmds[j]))
			if msg := s.step(1, cmds[j]); msg != "" {
				failRandomDiff(t, seed, len(sent), n, msg, history, sent, g.keys)
			}
			cmds = cmds[j+1:]
		}
	}
}

// sameKeyHistory returns the last 40 commands that name one of the keys
// the last command names, numbered: the story of the state that differed.
// An EXEC names the keys of the commands it ran.
func sameKeyHistory(sent [][]string, keys []string) []string {
	last := slices.Clone(sent[len(sent)-1][1:])
	if strings.EqualFold(sent[len(sent)-1][0], "EXEC") {
		for i := len(sent) - 2; i >= 0 && !strings.EqualFold(sent[i][0], "MULTI"); i-- {
			last = append(last, sent[i][1:]...)
		}
	}
	named := func(args []string) bool {
		for _, a := range args[1:] {
			if slices.Contains(keys, a) && slices.Contains(last, a) {
				return true
			}
		}
		return false
	}
	var out []string
	for i := len(sent) - 1; i >= 0 && len(out) < 40; i-- {
		if named(sent[i]) || strings.EqualFold(sent[i][0], "FLUSHALL") {
			out = append(out, fmt.Sprintf("%5d %s", i+1, quoteArgs(sent[i])))
		}
	}
	slices.Reverse(out)
	return out
}

// cmdGen generates commands over a few keys. IDs are explicit and mostly
// ascending per key, so that XADD succeeds often but not always; every
// command sometimes gets a malformed argument.
type cmdGen struct {
	r      *rand.Rand
	keys   []string
	ms     map[string]uint64 // per key: roughly the last ms used, to keep IDs near the top
	xinfo  bool              // also generate XINFO STREAM
	groups bool              // also generate consumer-group commands (groupCmd)
	// inMulti is whether the connection is inside MULTI (which the
	// generator knows exactly: only EXEC and DISCARD leave it).
	inMulti bool
}

func newCmdGen(seed uint64) *cmdGen {
	return &cmdGen{
		r:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		keys: []string{"s1", "s2", "s3", "s4", "k1", "k2"},
		ms:   map[string]uint64{},
	}
}

func (g *cmdGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g *cmdGen) chance(p float64) bool    { return g.r.Float64() < p }
func (g *cmdGen) key() string              { return g.keys[g.r.IntN(len(g.keys))] }

// stringKey prefers the k* keys, which hold strings most of the time.
func (g *cmdGen) stringKey() string {
	if g.chance(0.9) {
		return g.keys[4+g.r.IntN(2)]
	}
	return g.key()
}

// streamKey prefers the s* keys, which hold streams most of the time.
func (g *cmdGen) streamKey() string {
	if g.chance(0.9) {
		return g.keys[g.r.IntN(4)]
	}
	return g.key()
}

// id returns a full or partial ID near the top of key's stream.
func (g *cmdGen) id(key string) string {
	top := g.ms[key]
	ms := top
	if top > 3 && g.chance(0.5) {
		ms = top - uint64(g.r.IntN(4))
	}
	switch g.r.IntN(6) {
	case 0:
		return strconv.FormatUint(ms, 10)
	case 1:
		return fmt.Sprintf("%d-%d", ms, g.r.IntN(3))
	default:
		return fmt.Sprintf("%d-%d", ms, g.r.IntN(2))
	}
}

// badID returns something that is not a valid ID.
func (g *cmdGen) badID() string {
	return g.pick("abc", "1-x", "-1", "", "1-2-3", "18446744073709551616", "*-1")
}

// addID returns the ID for an XADD: usually a little above the last one.
func (g *cmdGen) addID(key string) string {
	switch {
	case g.chance(0.03):
		return g.badID()
	case g.chance(0.03):
		return "0-0"
	case g.chance(0.1):
		return g.id(key) // often equal or smaller: an error
	case g.chance(0.1):
		g.ms[key] += uint64(g.r.IntN(2))
		return fmt.Sprintf("%d-*", g.ms[key])
	}
	g.ms[key] += uint64(1 + g.r.IntN(3))
	if g.chance(0.3) {
		return strconv.FormatUint(g.ms[key], 10)
	}
	return fmt.Sprintf("%d-%d", g.ms[key], g.r.IntN(3))
}

func (g *cmdGen) rangeBound(key string, low bool) string {
	switch g.r.IntN(10) {
	case 0:
		if low {
			return "-"
		}
		return "+"
	case 1:
		return "(" + g.id(key)
	case 2:
		if g.chance(0.3) {
			return g.badID()
		}
		return g.pick("-", "+")
	default:
		return g.id(key)
	}
}

func (g *cmdGen) count() string {
	if g.chance(0.1) {
		return g.pick("0", "-1", "abc")
	}
	return strconv.Itoa(1 + g.r.IntN(6))
}

// trimArgs returns MAXLEN/MINID options; sometimes invalid.
func (g *cmdGen) trimArgs(key string) []string {
	var a []string
	if g.chance(0.5) {
		a = append(a, "MAXLEN")
	} else {
		a = append(a, "MINID")
	}
	op := g.pick("", "", "=", "~")
	if op != "" {
		a = append(a, op)
	}
	if a[0] == "MAXLEN" {
		a = append(a, strconv.Itoa(g.r.IntN(12)-1))
	} else if g.chance(0.05) {
		a = append(a, g.badID())
	} else {
		a = append(a, g.id(key))
	}
	if (op == "~" && g.chance(0.3)) || g.chance(0.03) {
		a = append(a, "LIMIT", strconv.Itoa(g.r.IntN(5)))
	}
	return a
}

func (g *cmdGen) fields() []string {
	n := 1 + g.r.IntN(3)
	var a []string
	for i := range n {
		a = append(a, g.pick("f", "g", "h", ""), fmt.Sprintf("v%d", i+g.r.IntN(100)))
	}
	if g.chance(0.03) {
		a = a[:len(a)-1] // an odd count
	}
	return a
}

func (g *cmdGen) value() string {
	switch g.r.IntN(6) {
	case 0:
		return strconv.Itoa(g.r.IntN(2000) - 1000)
	case 1:
		return g.pick("", "abc", "9223372036854775807", "-9223372036854775808", "1.5", " 7", "\x00z")
	default:
		return fmt.Sprintf("v%d", g.r.IntN(50))
	}
}

// next returns the next command. Inside MULTI it avoids the commands whose
// replies are compared loosely (KEYS, SCAN, TTL): EXEC returns them inside
// an array that is compared exactly.
func (g *cmdGen) next() []string {
	if g.inMulti && g.chance(0.2) {
		g.inMulti = false
		return []string{g.pick("EXEC", "EXEC", "EXEC", "DISCARD")}
	}
	for {
		var a []string
		switch {
		case g.xinfo && g.chance(0.04):
			a = []string{"XINFO", "STREAM", g.streamKey()}
			if g.chance(0.3) {
				a = append(a, "FULL") // with groups, wall-clock times
			}
		case g.groups && g.chance(0.4):
			a = g.groupCmd()
		default:
			a = g.any()
		}
		if g.inMulti && comparatorFor(a).note != "" {
			continue
		}
		switch strings.ToUpper(a[0]) {
		case "MULTI":
			g.inMulti = true
		case "EXEC", "DISCARD":
			g.inMulti = false
		}
		return a
	}
}

func (g *cmdGen) any() []string {
	switch w := g.r.IntN(100); {
	case w < 22:
		k := g.streamKey()
		a := []string{"XADD", k}
		if g.chance(0.1) {
			a = append(a, "NOMKSTREAM")
		}
		if g.chance(0.2) {
			a = append(a, g.trimArgs(k)...)
		}
		a = append(a, g.addID(k))
		return append(a, g.fields()...)
	case w < 30:
		k := g.streamKey()
		a := []string{g.pick("XRANGE", "XREVRANGE"), k}
		lo, hi := g.rangeBound(k, true), g.rangeBound(k, false)
		if a[0] == "XREVRANGE" {
			lo, hi = hi, lo
		}
		a = append(a, lo, hi)
		if g.chance(0.4) {
			a = append(a, "COUNT", g.count())
		}
		return a
	case w < 34:
		return []string{"XLEN", g.streamKey()}
	case w < 39:
		k := g.streamKey()
		a := []string{"XDEL", k}
		for range 1 + g.r.IntN(3) {
			if g.chance(0.05) {
				a = append(a, g.badID())
			} else {
				a = append(a, g.id(k))
			}
		}
		return a
	case w < 44:
		k := g.streamKey()
		return append([]string{"XTRIM", k}, g.trimArgs(k)...)
	case w < 47:
		k := g.streamKey()
		a := []string{"XSETID", k}
		if g.chance(0.5) {
			g.ms[k] += uint64(g.r.IntN(3))
		}
		a = append(a, g.id(k))
		if g.chance(0.3) {
			a = append(a, "ENTRIESADDED", strconv.Itoa(g.r.IntN(40)-2))
			a = append(a, "MAXDELETEDID", g.id(k))
		}
		return a
	case w < 54:
		a := []string{"XREAD"}
		if g.chance(0.5) {
			a = append(a, "COUNT", g.count())
		}
		a = append(a, "STREAMS")
		n := 1 + g.r.IntN(3)
		var ks, ids []string
		for range n {
			k := g.streamKey()
			ks = append(ks, k)
			switch {
			case g.chance(0.1):
				ids = append(ids, "$")
			case g.chance(0.2):
				ids = append(ids, "0")
			default:
				ids = append(ids, g.id(k))
			}
		}
		if g.chance(0.03) {
			ids = ids[1:] // unbalanced
		}
		return append(append(a, ks...), ids...)
	case w < 57:
		return []string{"DEL", g.key(), g.key()}
	case w < 59:
		return []string{"UNLINK", g.key()}
	case w < 62:
		return []string{"EXISTS", g.key(), g.key()}
	case w < 65:
		return []string{"TYPE", g.key()}
	case w < 67:
		return []string{g.pick("RENAME", "RENAMENX"), g.key(), g.key()}
	case w < 68:
		return []string{"KEYS", g.pick("*", "s*", "k?", "*1")}
	case w < 69:
		a := []string{"SCAN", "0"}
		if g.chance(0.5) {
			a = append(a, "MATCH", g.pick("*", "s*", "k*"))
		}
		if g.chance(0.5) {
			a = append(a, "TYPE", g.pick("stream", "string"))
		}
		return a
	case w < 70:
		return []string{"DBSIZE"}
	case w < 72:
		// Long TTLs only: an expiry during the run would race the two servers.
		a := []string{g.pick("EXPIRE", "EXPIRE", "PEXPIRE"), g.key(), strconv.Itoa(100000 + g.r.IntN(1000))}
		if g.chance(0.4) {
			a = append(a, g.pick("NX", "XX", "GT", "LT"))
		}
		return a
	case w < 73:
		return []string{"PERSIST", g.key()}
	case w < 75:
		return []string{g.pick("TTL", "PTTL"), g.key()}
	case w < 76:
		return []string{"PEXPIRE", g.key(), "0"}
	case w < 81:
		a := []string{"SET", g.stringKey(), g.value()}
		if g.chance(0.3) {
			a = append(a, g.pick("NX", "XX", "GET", "KEEPTTL", "EX", "PX"))
			if a[3] == "EX" || a[3] == "PX" {
				a = append(a, g.pick("100000", "0", "abc"))
			}
		}
		return a
	case w < 85:
		return []string{"GET", g.stringKey()}
	case w < 86:
		return []string{"MGET", g.stringKey(), g.stringKey(), g.stringKey()}
	case w < 87:
		return []string{"MSET", g.stringKey(), g.value(), g.stringKey(), g.value()}
	case w < 91:
		switch g.r.IntN(4) {
		case 0:
			return []string{"INCR", g.stringKey()}
		case 1:
			return []string{"DECR", g.stringKey()}
		default:
			return []string{g.pick("INCRBY", "DECRBY"), g.stringKey(), g.value()}
		}
	case w < 93:
		return []string{"APPEND", g.stringKey(), g.value()}
	case w < 95:
		return []string{"STRLEN", g.stringKey()}
	case w < 96:
		return []string{"OBJECT", "ENCODING", g.key()}
	case w < 97:
		if g.chance(0.1) {
			return []string{g.pick("EXEC", "DISCARD")} // outside MULTI: an error
		}
		return []string{"MULTI"}
	default:
		return []string{g.pick("PING", "ECHO", "XADD", "GET", "XRANGE", "SET")}
	}
}
