package stream

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// TestMain runs the stream tests with checkPELWrites on, so that every
// test that touches a PEL also checks SingleDelete's rule (group_store.go).
// Benchmarks run without it: it costs a Get per PEL write.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		checkPELWrites = true
	}
	os.Exit(m.Run())
}

// TestPELWriteCheck shows the check catches what would break SingleDelete:
// a second Set of a pending record, a removal of one that is not there.
func TestPELWriteCheck(t *testing.T) {
	if !checkPELWrites {
		t.Skip("checkPELWrites is off")
	}
	g := newGroupEnv(t)
	g.add("s", id(1), id(2))
	g.create("s", "g", ID{})
	g.read("s", "g", "a", 1, MaxID, true) // 1-0 pending for a
	for _, tc := range []struct {
		name string
		op   func(op *groupOp) error
	}{
		{"set pending by id", func(op *groupOp) error { return op.setNack(id(1), &nack{Deliveries: 1, Owner: []byte("a")}) }},
		{"set pending owner index", func(op *groupOp) error { return op.setPEL(op.ownerKey([]byte("a"), id(1)), nil) }},
		{"delete absent by id", func(op *groupOp) error { return op.deletePEL(op.pelKey(id(2))) }},
		{"delete absent owner index", func(op *groupOp) error { return op.deletePEL(op.ownerKey([]byte("b"), id(1))) }},
		{"add pending", func(op *groupOp) error {
			c, err := op.consumer([]byte("b"), true)
			if err != nil {
				return err
			}
			return op.addNack(id(1), c, &nack{Deliveries: 1})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := g.e.Update(func(tx *Tx) error {
				op, err := tx.loadGroup(0, []byte("s"), []byte("g"))
				if err != nil {
					return err
				}
				return tc.op(op)
			})
			if !errors.Is(err, errPELWrite) {
				t.Fatalf("got %v, want errPELWrite", err)
			}
		})
	}
	// The same writes done right pass.
	g.update(func(tx *Tx) error {
		op, err := tx.loadGroup(0, []byte("s"), []byte("g"))
		if err != nil {
			return err
		}
		if err := op.putNack(id(1), &nack{Deliveries: 2, Owner: []byte("a")}); err != nil {
			return err
		}
		return op.flush()
	})
	g.checkGroupInvariants("s")
}

// TestPELSurvivesCompaction runs random group commands (with the writes
// checked), including those that write PEL records other than through
// delivery and acknowledgement — XCLAIM, XAUTOCLAIM, DELCONSUMER,
// DESTROY and re-CREATE, RENAME back and forth, commands undone by a
// savepoint — and now and then compacts the store, where SingleDeletes
// meet the Sets they remove: every PEL must read the same after a
// compaction as before. (Pebble may or may not resurrect a record Set
// twice, so this cannot stand in for the write check, which the commands
// here run under too.)
func TestPELSurvivesCompaction(t *testing.T) {
	for seed := uint64(1); seed <= 24; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			g := newGroupEnv(t)
			keys := []string{"s", "t"}
			renames, checked := 0, 0
			groups := [][]byte{[]byte("g1"), []byte("g2")}
			consumers := [][]byte{[]byte("a"), []byte("b"), []byte("cc")}
			var next uint64 = 1
			g.update(func(tx *Tx) error {
				for _, grp := range groups {
					if err := tx.XGroupCreate(0, []byte("s"), grp, ID{}, false, true, EntriesReadUnknown); err != nil {
						return err
					}
				}
				return nil
			})
			randID := func() ID { return id(1 + r.Uint64N(next+1)) }
			ignore := func(err error) error {
				if errors.Is(err, ErrNoSuchKey) || errors.Is(err, ErrNoGroup) || errors.Is(err, ErrGroupExists) {
					return nil
				}
				return err
			}
			for round := 0; round < 80; round++ {
				g.now += int64(r.IntN(50))
				g.update(func(tx *Tx) error {
					for range 6 {
						// One stream, which RENAME moves between the keys.
						k := []byte(keys[0])
						if _, ok, err := tx.loadStream(0, k); err != nil {
							return err
						} else if !ok {
							k = []byte(keys[1])
						}
						grp := groups[r.IntN(len(groups))]
						c := consumers[r.IntN(len(consumers))]
						sp := tx.Savepoint()
						var err error
						switch r.IntN(12) {
						case 0, 1:
							for range 1 + r.IntN(6) {
								_, _, err = tx.XAdd(0, k, &XAddArgs{ID: id(next), Fields: fv("f", "v")})
								next++
							}
						case 2, 3:
							_, err = tx.XReadGroup(0, k, ReadGroupArgs{Group: grp, Consumer: c, Count: int64(1 + r.IntN(5))}, MaxID, true)
						case 4:
							_, err = tx.XReadGroup(0, k, ReadGroupArgs{Group: grp, Consumer: c, Count: int64(r.IntN(4))}, ID{}, false)
						case 5, 6:
							_, err = tx.XAck(0, k, grp, []ID{randID(), randID(), randID()})
						case 7:
							_, err = tx.XClaim(0, k, grp, c, ClaimArgs{IDs: []ID{randID(), randID()}, Force: r.IntN(2) == 0, MinIdle: int64(r.IntN(40))})
						case 8:
							_, err = tx.XAutoClaim(0, k, grp, c, AutoClaimArgs{Start: randID(), Count: 1 + int64(r.IntN(5))})
						case 9:
							switch r.IntN(3) {
							case 0:
								_, err = tx.XGroupDelConsumer(0, k, grp, c)
							case 1:
								err = tx.XGroupSetID(0, k, grp, randID(), false, EntriesReadUnknown)
							default:
								if _, err = tx.XGroupDestroy(0, k, grp); err == nil {
									err = tx.XGroupCreate(0, k, grp, ID{}, false, false, EntriesReadUnknown)
								}
							}
						case 10:
							dst := keys[0]
							if string(k) == dst {
								dst = keys[1]
							}
							_, err = tx.Rename(0, k, []byte(dst), false)
							renames++
						case 11:
							_, err = tx.XDel(0, k, []ID{randID()})
						}
						if err = ignore(err); err != nil {
							return err
						}
						if r.IntN(8) == 0 {
							if err := tx.RollbackTo(sp); err != nil {
								return err
							}
						}
					}
					return nil
				})
				for _, k := range keys {
					g.checkGroupInvariants(k)
				}
				// Compacting now and then puts some Sets in tables
				// before their SingleDeletes come.
				if round%20 != 19 {
					continue
				}
				before := g.dumpPELs(keys)
				if err := g.e.db.Compact(context.Background()); err != nil {
					t.Fatal(err)
				}
				if after := g.dumpPELs(keys); after != before {
					t.Fatalf("PELs changed by a compaction:\nbefore:\n%s\nafter:\n%s", before, after)
				}
				if strings.Contains(before, "pending") {
					checked++
				}
			}
			if checked == 0 || renames == 0 {
				t.Fatalf("%d compactions of a non-empty PEL, %d renames: the seed tests too little", checked, renames)
			}
		})
	}
}

// dumpPELs lists every group of keys with its PEL by ID and by owner.
func (g *groupEnv) dumpPELs(keys []string) string {
	g.t.Helper()
	var b strings.Builder
	g.view(func(tx *Tx) error {
		for _, k := range keys {
			s, ok, err := tx.loadStream(0, []byte(k))
			if err != nil || !ok {
				fmt.Fprintf(&b, "%s: none\n", k)
				continue
			}
			names, recs, err := tx.groupNames(s)
			if err != nil {
				return err
			}
			for i, name := range names {
				op := &groupOp{tx: tx, s: s, name: name, rec: recs[i], consumers: map[string]*consumerState{}}
				fmt.Fprintf(&b, "%s %s: %+v\n", k, name, recs[i])
				err := tx.walkPEL(op, nil, false, ID{}, MaxID, func(id ID, n *nack) bool {
					fmt.Fprintf(&b, "  pending %s %s t=%d n=%d\n", id, n.Owner, n.DeliveryTime, n.Deliveries)
					return true
				})
				if err != nil {
					return err
				}
				cs, err := op.consumerList()
				if err != nil {
					return err
				}
				for _, c := range cs {
					fmt.Fprintf(&b, "  consumer %s %+v:", c.name, c.rec)
					err := tx.walkPEL(op, c.name, true, ID{}, MaxID, func(id ID, _ *nack) bool {
						fmt.Fprintf(&b, " %s", id)
						return true
					})
					if err != nil {
						return err
					}
					b.WriteByte('\n')
				}
			}
		}
		return nil
	})
	return b.String()
}
