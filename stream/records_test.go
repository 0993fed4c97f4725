package stream

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

// packStream rewrites the entries of stream key as records of up to per
// entries each, within nodes, as the packing writer is to write them, and
// marks the stream packed. A record is keyed by its first entry's ID or,
// at random, by an ID between the entry before it and its first, as a
// record whose first entries were deleted is. It is the tests' writer of
// packed records.
func packStream(tx *Tx, db int, key []byte, per int, rng *rand.Rand) error {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok {
		return err
	}
	nodes, err := streamNodes(tx, s)
	if err != nil {
		return err
	}
	for _, node := range nodes {
		lo, hi := s.entryBounds(node.Master, node.Last)
		it, err := tx.r.NewIter(lo, hi)
		if err != nil {
			return err
		}
		var es []recEntry
		for ok := it.First(); ok; ok = it.Next() {
			k := append([]byte(nil), it.Key()...)
			v := append([]byte(nil), it.Value()...)
			if es, err = appendRecordEntries(es, k, v); err != nil {
				it.Close()
				return err
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
		if err := tx.b.DeleteRange(lo, hi); err != nil {
			return err
		}
		after, first := node.Master, true
		for len(es) > 0 {
			n := min(len(es), 1+rng.IntN(per))
			chunk := es[:n]
			es = es[n:]
			key := chunk[0].id
			if !first {
				after, _ = after.Next()
			}
			if after.Less(key) && rng.IntN(2) == 0 {
				key = after
			}
			tx.vbuf = appendRecord(tx.vbuf[:0], key, chunk)
			if err := tx.b.Set(s.entryKey(key), tx.vbuf); err != nil {
				return err
			}
			after, first = chunk[n-1].id, false
		}
	}
	s.sm.Packed = 1
	return tx.save(s)
}

// streamNodes returns the nodes of stream s, in order.
func streamNodes(tx *Tx, s *streamRef) ([]Node, error) {
	lower, upper := storage.KindBounds(s.db, s.key, s.meta.Version, storage.KindNode)
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return nil, err
	}
	var nodes []Node
	for ok := it.First(); ok; ok = it.Next() {
		node, err := DecodeNode(it.Value())
		if err != nil {
			it.Close()
			return nil, err
		}
		nodes = append(nodes, node)
	}
	return nodes, it.Close()
}

// A packed stream answers every read, delete and trim as the same stream
// unpacked does. Two streams get the same random commands, one of them
// repacked from time to time (records of 1 to 6 entries, some keyed
// before their first entry), and every reply and the streams' metadata
// must agree.
func TestPackedStreamAgreesWithUnpacked(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 23))
			// One clock for both streams' commands: delivery times and
			// idle times in the replies must agree.
			now := int64(1_700_000_000_000)
			e := openTestEngine(t, Options{
				Limits: func() NodeLimits { return NodeLimits{MaxBytes: 4096, MaxEntries: int64(3 + seed%8)} },
				Now:    func() int64 { return now },
			})
			plain, packed := []byte("plain"), []byte("packd") // the same length: SeqState counts it in Bytes
			group := []byte("g")
			var ids []ID
			last := ID{Ms: 1}
			pick := func() ID {
				if len(ids) == 0 || rng.IntN(5) == 0 {
					return ID{Ms: rng.Uint64N(last.Ms + 2), Seq: rng.Uint64N(3)}
				}
				return ids[rng.IntN(len(ids))]
			}
			for step := range 150 {
				now += 1000
				// Each command as a function of the key, run on both.
				var run func(tx *Tx, key []byte) (any, error)
				switch op := rng.IntN(20); {
				case op < 7:
					if rng.IntN(3) == 0 {
						last = ID{Ms: last.Ms + 1 + rng.Uint64N(3)}
					} else {
						last.Seq += 1 + rng.Uint64N(2)
					}
					id := last
					ids = append(ids, id)
					fields := fv("f", fmt.Sprint(step), "g", "x")
					if rng.IntN(3) == 0 {
						fields = fv("subject", fmt.Sprintf("s.%d", rng.IntN(3)), "v", fmt.Sprint(step))
					}
					a := XAddArgs{ID: id, Fields: fields}
					switch rng.IntN(10) {
					case 0:
						a.Trim = Trim{Strategy: TrimMaxLen, MaxLen: int64(rng.IntN(30)), Approx: rng.IntN(2) == 0}
					case 1:
						a.Trim = Trim{Strategy: TrimMinID, MinID: pick(), Approx: rng.IntN(2) == 0}
					}
					run = func(tx *Tx, key []byte) (any, error) {
						got, _, err := tx.XAdd(0, key, &a)
						return got, err
					}
				case op < 10:
					lo, hi := pick(), pick()
					if rng.IntN(4) == 0 {
						lo = ID{}
					}
					if rng.IntN(4) == 0 {
						hi = MaxID
					}
					count := int64(rng.IntN(12)) - 1
					rev := rng.IntN(2) == 0
					run = func(tx *Tx, key []byte) (any, error) {
						return tx.XRange(0, key, lo, hi, count, rev)
					}
				case op < 11:
					after, count := pick(), int64(1+rng.IntN(5))
					run = func(tx *Tx, key []byte) (any, error) {
						return tx.XRead(0, key, after, count)
					}
				case op < 13:
					del := []ID{pick(), pick()}
					run = func(tx *Tx, key []byte) (any, error) {
						return tx.XDel(0, key, del)
					}
				case op < 14:
					tr := Trim{Strategy: TrimMaxLen, MaxLen: int64(rng.IntN(40)), Approx: rng.IntN(3) == 0}
					if rng.IntN(2) == 0 {
						tr = Trim{Strategy: TrimMinID, MinID: pick(), Approx: rng.IntN(3) == 0}
					}
					run = func(tx *Tx, key []byte) (any, error) {
						return tx.XTrim(0, key, tr)
					}
				case op < 15:
					seq := rng.Uint64N(uint64(len(ids)) + 2)
					filter := filterOf([]string{"*", "s.1", "s.*"}[rng.IntN(3)])
					id := pick()
					run = func(tx *Tx, key []byte) (any, error) {
						a, _, err1 := tx.EntryBySeq(0, key, seq)
						b, _, err2 := tx.NextBySubject(0, key, seq, filter)
						c, _, err3 := tx.LastBySubject(0, key, filter)
						d, _, err4 := tx.SeqFromID(0, key, id)
						st, _, err5 := tx.SeqState(0, key)
						for _, err := range []error{err1, err2, err3, err4, err5} {
							if err != nil {
								return nil, err
							}
						}
						// The subject of a stream's entry without one is the
						// stream's name, which differs between the two.
						for _, e := range []*SeqEntry{&a, &b, &c} {
							e.Subject = nil
						}
						return []any{a, b, c, d, st}, nil
					}
				case op < 17:
					history := rng.IntN(2) == 0
					claim := []ID{pick(), pick()}
					run = func(tx *Tx, key []byte) (any, error) {
						if err := tx.XGroupCreate(0, key, group, ID{}, false, true, -1); err != nil && err != ErrGroupExists {
							return nil, err
						}
						a := ReadGroupArgs{Group: group, Consumer: []byte("c"), Count: 3}
						r, err := tx.XReadGroup(0, key, a, ID{}, !history)
						if err != nil {
							return nil, err
						}
						c, err := tx.XClaim(0, key, group, []byte("d"), ClaimArgs{IDs: claim})
						return []any{r, c}, err
					}
				case op < 18:
					run = func(tx *Tx, key []byte) (any, error) {
						return tx.XInfo(0, key, true, 0)
					}
				default:
					per := 1 + rng.IntN(6)
					if err := e.Update(func(tx *Tx) error { return packStream(tx, 0, packed, per, rng) }); err != nil {
						t.Fatalf("step %d: packing: %v", step, err)
					}
					continue
				}
				var got [2]any
				var errs [2]error
				for i, key := range [][]byte{plain, packed} {
					errs[i] = e.Update(func(tx *Tx) error {
						var err error
						got[i], err = run(tx, key)
						return err
					})
				}
				if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
					t.Fatalf("step %d: errors differ: %v against %v", step, errs[0], errs[1])
				}
				if !reflect.DeepEqual(got[0], got[1]) {
					t.Fatalf("step %d: replies differ:\nplain  %+v\npacked %+v", step, got[0], got[1])
				}
				var metas [2]streamMeta
				if err := e.View(func(tx *Tx) error {
					for i, key := range [][]byte{plain, packed} {
						s, ok, err := tx.loadStream(0, key)
						if err != nil || !ok {
							return err
						}
						metas[i] = s.sm
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				metas[1].Packed = metas[0].Packed
				if metas[0] != metas[1] {
					t.Fatalf("step %d: metadata differs:\nplain  %+v\npacked %+v", step, metas[0], metas[1])
				}
			}
		})
	}
}

// A scan whose window (scanWindow) holds too few entries reads the rest
// of its range through a new iterator, which sees what the transaction
// wrote there: appends not yet merged into the batch's index (past its
// first 8) and deferred entry records. Moving the first iterator's bounds
// instead showed neither: the forward scan below lost the transaction's
// entries from the 9th on, the backward one the record holding the newest
// entries, keyed before the window.
func TestScanBeyondWindowSeesTransactionWrites(t *testing.T) {
	e := openTestEngine(t, Options{})
	key := []byte("s")
	if err := e.Update(func(tx *Tx) error {
		for ms := uint64(1); ms <= 1000; ms++ {
			if _, _, err := tx.XAdd(0, key, &XAddArgs{ID: ID{Ms: ms}, Fields: fv("f", "v")}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ids := func(es []Entry) (out []uint64) {
		for _, e := range es {
			out = append(out, e.ID.Ms)
		}
		return out
	}
	if err := e.Update(func(tx *Tx) error {
		// 16 entries: one packed record, keyed 5000, below the backward
		// scan's window.
		for ms := uint64(5000); ms <= 5030; ms += 2 {
			if _, _, err := tx.XAdd(0, key, &XAddArgs{ID: ID{Ms: ms}, Fields: fv("f", "v")}); err != nil {
				return err
			}
		}
		es, err := tx.XRange(0, key, ID{Ms: 999}, MaxID, 15, false)
		if err != nil {
			return err
		}
		want := []uint64{999, 1000, 5000, 5002, 5004, 5006, 5008, 5010, 5012, 5014, 5016, 5018, 5020, 5022, 5024}
		if !reflect.DeepEqual(ids(es), want) {
			t.Errorf("XRANGE 999 + COUNT 15 in the transaction: %v, want %v", ids(es), want)
		}
		es, err = tx.XRange(0, key, ID{}, MaxID, 1, true)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(ids(es), []uint64{5030}) {
			t.Errorf("XREVRANGE + - COUNT 1 in the transaction: %v, want [5030]", ids(es))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A group commit packs the entries it appends to a stream: records of at
// most recordMaxEntries entries and about recordMaxBytes, each within one
// node; a stream written one XADD per transaction stays unpacked.
func TestGroupPacksEntries(t *testing.T) {
	e := openTestEngine(t, Options{Limits: func() NodeLimits { return NodeLimits{MaxBytes: 1 << 20, MaxEntries: 40} }})
	const n = 100
	if err := e.Update(func(tx *Tx) error {
		for i := range n {
			v := "v"
			if i >= 80 {
				v = string(make([]byte, 500)) // the last 20: four to a record by size
			}
			tx.Savepoint()
			if _, _, err := tx.XAdd(0, []byte("s"), &XAddArgs{Auto: true, Fields: fv("f", v)}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := e.Update(func(tx *Tx) error {
			_, _, err := tx.XAdd(0, []byte("single"), &XAddArgs{Auto: true, Fields: fv("f", "v")})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	mustView(t, e, func(tx *Tx) error {
		s, _, err := tx.loadStream(0, []byte("s"))
		if err != nil {
			return err
		}
		if s.sm.Packed != 1 {
			t.Errorf("stream s: Packed %d, want 1", s.sm.Packed)
		}
		nodes, err := streamNodes(tx, s)
		if err != nil {
			return err
		}
		lower, upper := storage.KindBounds(0, []byte("s"), s.meta.Version, storage.KindEntry)
		it, err := tx.r.NewIter(lower, upper)
		if err != nil {
			return err
		}
		defer it.Close()
		records, entries := 0, 0
		for ok := it.First(); ok; ok = it.Next() {
			es, err := appendRecordEntries(nil, it.Key(), it.Value())
			if err != nil {
				return err
			}
			records++
			entries += len(es)
			if len(es) > recordMaxEntries || len(es) > 1 && len(it.Value()) > recordMaxBytes {
				t.Errorf("record %d: %d entries, %d bytes", records, len(es), len(it.Value()))
			}
			inNode := false
			for _, node := range nodes {
				inNode = inNode || !es[0].id.Less(node.Master) && !node.Last.Less(es[len(es)-1].id)
			}
			if !inNode {
				t.Errorf("record %d (%v to %v) spans nodes", records, es[0].id, es[len(es)-1].id)
			}
		}
		// 80 small entries in nodes of 40: 3 records each; 20 large: 5.
		if entries != n || records != 11 {
			t.Errorf("%d entries in %d records, want %d in 11", entries, records, n)
		}
		single, _, err := tx.loadStream(0, []byte("single"))
		if err != nil {
			return err
		}
		if single.sm.Packed != 0 {
			t.Errorf("stream single: Packed %d, want 0", single.sm.Packed)
		}
		return nil
	})
}
