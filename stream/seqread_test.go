package stream

import (
	"fmt"
	"math/rand/v2"
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

// globFilter is the tests' SubjectFilter: a path.Match pattern (subjects
// here hold no '/'), a literal when it has no special character. The
// bridge's NATS filters are tested in the bridge.
type globFilter string

func (g globFilter) Literal() ([]byte, bool) {
	return []byte(g), !strings.ContainsAny(string(g), `*?[\`)
}

func (g globFilter) Match(subject []byte) bool {
	ok, _ := path.Match(string(g), string(subject))
	return ok
}

// filterOf is pattern as a SubjectFilter; "" is nil, every subject.
func filterOf(pattern string) SubjectFilter {
	if pattern == "" {
		return nil
	}
	return globFilter(pattern)
}

// seqModel is what the sequence view must show: the live entries in order.
type seqModel struct {
	key     string
	added   uint64
	entries []SeqEntry
}

func (m *seqModel) subject(fv [][]byte) []byte {
	if s, ok := entrySubject(fv); ok {
		return s
	}
	return []byte(m.key)
}

func (m *seqModel) next(from uint64, filter string) (SeqEntry, bool) {
	for _, e := range m.entries {
		if e.Seq >= from && (filter == "" || globFilter(filter).Match(e.Subject)) {
			return e, true
		}
	}
	return SeqEntry{}, false
}

func (m *seqModel) last(filter string) (SeqEntry, bool) {
	for i := len(m.entries) - 1; i >= 0; i-- {
		if e := m.entries[i]; filter == "" || globFilter(filter).Match(e.Subject) {
			return e, true
		}
	}
	return SeqEntry{}, false
}

// TestSeqViewRandom runs random XADD/XDEL/XTRIM on small nodes (so that
// nodes are created, freed and trimmed often) and checks every sequence
// lookup against a model after each step, for streams whose entries all,
// none or some carry a subject field.
func TestSeqViewRandom(t *testing.T) {
	filters := []string{"", "s", "a.b", "a.c", "a.*", "a?b", "*", "x", "nope", "*.b"}
	for _, mode := range []string{"none", "all", "mixed"} {
		for seed := range 4 {
			t.Run(fmt.Sprintf("%s/%d", mode, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(seed), 7))
				e := openTestEngine(t, Options{Limits: func() NodeLimits { return NodeLimits{MaxBytes: 4096, MaxEntries: 1 + int64(seed)*3} }})
				m := &seqModel{key: "s"}
				subjects := []string{"a.b", "a.c", "x"}
				for step := range 200 {
					var op string
					switch r := rng.IntN(10); {
					case r < 6:
						op = "xadd"
						f := fv("data", fmt.Sprint(step))
						switch mode {
						case "all":
							f = append(f, fv("subject", subjects[rng.IntN(3)])...)
						case "mixed":
							if rng.IntN(2) == 0 {
								f = append(f, fv("subject", subjects[rng.IntN(3)])...)
							}
						}
						if rng.IntN(5) == 0 {
							f = append(f, fv(fmt.Sprintf("h%d", rng.IntN(40)), "v")...)
						}
						id, err := xadd(t, e, "s", XAddArgs{Auto: true, Fields: f})
						if err != nil {
							t.Fatal(err)
						}
						m.added++
						m.entries = append(m.entries, SeqEntry{Seq: m.added, ID: id, Subject: m.subject(f), Fields: f})
					case r == 6 && m.added > 0:
						// XSETID moves entries-added; sequences must not.
						op = "xsetid"
						mustUpdate(t, e, func(tx *Tx) error {
							last, _, err := tx.LastID(0, []byte("s"))
							if err != nil {
								return err
							}
							return tx.XSetID(0, []byte("s"), XSetIDArgs{ID: last, EntriesAdded: int64(len(m.entries) + rng.IntN(3))})
						})
					case r < 8 && len(m.entries) > 0:
						op = "xdel"
						i := rng.IntN(len(m.entries))
						mustUpdate(t, e, func(tx *Tx) error {
							_, err := tx.XDel(0, []byte("s"), []ID{m.entries[i].ID})
							return err
						})
						m.entries = append(m.entries[:i], m.entries[i+1:]...)
					default:
						op = "xtrim"
						maxLen := int64(rng.IntN(len(m.entries) + 1))
						approx := rng.IntN(2) == 0
						mustUpdate(t, e, func(tx *Tx) error {
							_, err := tx.XTrim(0, []byte("s"), Trim{Strategy: TrimMaxLen, MaxLen: maxLen, Approx: approx})
							return err
						})
						// Which entries an approximate trim removes is the
						// node model's business: read the survivors back.
						mustView(t, e, func(tx *Tx) error {
							live, err := tx.XRange(0, []byte("s"), ID{}, MaxID, -1, false)
							if err != nil {
								return err
							}
							keep := map[ID]bool{}
							for _, l := range live {
								keep[l.ID] = true
							}
							var rest []SeqEntry
							for _, me := range m.entries {
								if keep[me.ID] {
									rest = append(rest, me)
								}
							}
							m.entries = rest
							return nil
						})
					}
					mustView(t, e, func(tx *Tx) error {
						checkSeqView(t, tx, m, filters, fmt.Sprintf("step %d (%s)", step, op))
						return nil
					})
				}
			})
		}
	}
}

func checkSeqView(t *testing.T, tx *Tx, m *seqModel, filters []string, where string) {
	t.Helper()
	key := []byte(m.key)
	st, ok, err := tx.SeqState(0, key)
	if m.added == 0 && err == nil && !ok {
		return // no XADD yet: no stream
	}
	if err != nil || !ok {
		t.Fatalf("%s: SeqState: %v %v", where, ok, err)
	}
	want := SeqState{Messages: uint64(len(m.entries)), FirstSeq: m.added + 1, LastSeq: m.added}
	for _, e := range m.entries {
		want.Bytes += jetStreamMsgSize([]byte(key), e.Fields)
	}
	if len(m.entries) > 0 {
		want.FirstSeq, want.FirstID, want.LastID = m.entries[0].Seq, m.entries[0].ID, m.entries[len(m.entries)-1].ID
	}
	if st != want {
		t.Fatalf("%s: SeqState = %+v, want %+v", where, st, want)
	}
	live := map[uint64]SeqEntry{}
	for _, e := range m.entries {
		live[e.Seq] = e
	}
	seqs := []uint64{0, 1, m.added, m.added + 1}
	for range 20 {
		seqs = append(seqs, rand.Uint64N(m.added+2))
	}
	for _, seq := range seqs {
		got, ok, err := tx.EntryBySeq(0, key, seq)
		if err != nil {
			t.Fatalf("%s: EntryBySeq(%d): %v", where, seq, err)
		}
		w, wok := live[seq]
		if ok != wok || (ok && !reflect.DeepEqual(got, w)) {
			t.Fatalf("%s: EntryBySeq(%d) = %+v %v, want %+v %v", where, seq, got, ok, w, wok)
		}
	}
	for _, f := range filters {
		for _, from := range []uint64{0, 1, m.added / 2, m.added, m.added + 1} {
			got, ok, err := tx.NextBySubject(0, key, from, filterOf(f))
			if err != nil {
				t.Fatalf("%s: NextBySubject(%d, %q): %v", where, from, f, err)
			}
			w, wok := m.next(from, f)
			if ok != wok || (ok && !reflect.DeepEqual(got, w)) {
				t.Fatalf("%s: NextBySubject(%d, %q) = %+v %v, want %+v %v", where, from, f, got, ok, w, wok)
			}
		}
		got, ok, err := tx.LastBySubject(0, key, filterOf(f))
		if err != nil {
			t.Fatalf("%s: LastBySubject(%q): %v", where, f, err)
		}
		w, wok := m.last(f)
		if ok != wok || (ok && !reflect.DeepEqual(got, w)) {
			t.Fatalf("%s: LastBySubject(%q) = %+v %v, want %+v %v", where, f, got, ok, w, wok)
		}
	}
}

// TestFieldSets checks that entries read back the same whether they were
// stored with their names or against a field set, including past the
// stream's limit of sets, after a restart of the cache, and after the
// stream is deleted and recreated with other fields.
func TestFieldSets(t *testing.T) {
	for _, cacheKeys := range []int{0, -1} {
		e := openTestEngine(t, Options{MetaCacheKeys: cacheKeys})
		var want []Entry
		add := func(f [][]byte) {
			id, err := xadd(t, e, "s", XAddArgs{Auto: true, Fields: f})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, Entry{ID: id, Fields: f})
		}
		for i := range 3 * maxFieldSets {
			add(fv("a", fmt.Sprint(i), "b", "x"))
			add(fv(fmt.Sprintf("f%d", i), "1"))
			add(fv("a", "", "b", "y"))
		}
		mustView(t, e, func(tx *Tx) error {
			got, err := tx.XRange(0, []byte("s"), ID{}, MaxID, -1, false)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("cache %d: XRANGE differs:\n got %q\nwant %q", cacheKeys, got[:4], want[:4])
			}
			s, _, err := tx.loadStream(0, []byte("s"))
			if err != nil {
				return err
			}
			if s.sm.FieldSets != maxFieldSets {
				t.Fatalf("cache %d: %d field sets, want %d", cacheKeys, s.sm.FieldSets, maxFieldSets)
			}
			return nil
		})
	}
}

// TestFieldSetsCachedByReads checks that a read which loads a stream's
// field sets leaves them in the metadata cache, so that the next read does
// not load them again.
func TestFieldSetsCachedByReads(t *testing.T) {
	db, err := storage.Open(storage.InMemory())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e, err := Open(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := e.Update(func(tx *Tx) error {
			_, _, err := tx.XAdd(0, []byte("s"), &XAddArgs{Auto: true, Fields: fv("a", "1", "b", "2")})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// A second engine on the same store starts with an empty cache, as
	// after a restart.
	e2, err := Open(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		mustView(t, e2, func(tx *Tx) error {
			es, err := tx.XRange(0, []byte("s"), ID{}, MaxID, -1, false)
			if err != nil || len(es) != 3 {
				t.Fatalf("XRANGE: %d entries, %v", len(es), err)
			}
			return nil
		})
	}
	km, ok := e2.cache.get(0, []byte("s"))
	if !ok || km.sets == nil || len(km.sets.names) != 1 {
		t.Fatalf("cache after reads: %v %+v", ok, km.sets)
	}
}

// TestJetStreamMsgSize: the sizes a real nats-server v2.15 reports for the same
// messages (STREAM.INFO state bytes of a stream holding just that one).
func TestJetStreamMsgSize(t *testing.T) {
	for _, c := range []struct {
		key    string
		fields []string
		want   uint64
	}{
		{"orders", []string{"data", "hello"}, 41},                           // 22 + 6 + 5 + 8
		{"KV_cfg", []string{"subject", "$KV.cfg.color", "data", "red"}, 46}, // 22 + 13 + 3 + 8
		{"orders", nil, 36}, // empty payload
		// 22 + 6 + 4 + len("NATS/1.0\r\nOrder-Id: 42\r\n\r\n") + 5 + 8
		{"orders", []string{"data", "again", "Order-Id", "42"}, 71},
		// names that cannot be header keys are left out; a second data
		// field is a header
		{"orders", []string{"data", "x", "bad key", "v", "data", "y"}, 22 + 6 + 4 + 10 + 9 + 2 + 1 + 8},
	} {
		if got := jetStreamMsgSize([]byte(c.key), fv(c.fields...)); got != c.want {
			t.Errorf("jetStreamMsgSize(%s, %q) = %d, want %d", c.key, c.fields, got, c.want)
		}
	}
}
