package stream

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

// TestGroupRandomOps runs random group commands and checks after each
// batch that every stored count equals what a full scan derives.
func TestGroupRandomOps(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			g := newGroupEnv(t)
			k := []byte("s")
			groups := [][]byte{[]byte("g1"), []byte("g2"), nil}
			consumers := [][]byte{[]byte("a"), []byte("b"), []byte("cc"), nil}
			var next uint64 = 1
			g.update(func(tx *Tx) error {
				for _, grp := range groups {
					if err := tx.XGroupCreate(0, k, grp, ID{}, false, true, EntriesReadUnknown); err != nil {
						return err
					}
				}
				return nil
			})
			randID := func() ID { return id(1 + r.Uint64N(next+2)) }
			for round := 0; round < 60; round++ {
				g.now += int64(r.IntN(50))
				g.update(func(tx *Tx) error {
					for range 8 {
						grp := groups[r.IntN(len(groups))]
						c := consumers[r.IntN(len(consumers))]
						var err error
						switch r.IntN(11) {
						case 0, 1:
							for range 1 + r.IntN(4) {
								_, _, err = tx.XAdd(0, k, &XAddArgs{ID: id(next), Fields: fv("f", "v")})
								next++
							}
						case 2, 3:
							_, err = tx.XReadGroup(0, k, ReadGroupArgs{Group: grp, Consumer: c, Count: int64(r.IntN(4)), NoAck: r.IntN(5) == 0}, MaxID, true)
						case 4:
							_, err = tx.XReadGroup(0, k, ReadGroupArgs{Group: grp, Consumer: c, Count: int64(r.IntN(4))}, ID{}, false)
						case 5:
							_, err = tx.XAck(0, k, grp, []ID{randID(), randID()})
						case 6:
							_, err = tx.XClaim(0, k, grp, c, ClaimArgs{IDs: []ID{randID(), randID()}, Force: r.IntN(2) == 0, JustID: r.IntN(2) == 0, MinIdle: int64(r.IntN(40))})
						case 7:
							_, err = tx.XAutoClaim(0, k, grp, c, AutoClaimArgs{Start: randID(), Count: 1 + int64(r.IntN(5)), MinIdle: int64(r.IntN(40))})
						case 8:
							_, err = tx.XDel(0, k, []ID{randID()})
						case 9:
							if r.IntN(4) == 0 {
								_, err = tx.XGroupDelConsumer(0, k, grp, c)
							} else {
								err = tx.XGroupSetID(0, k, grp, randID(), false, EntriesReadUnknown)
							}
						case 10:
							_, err = tx.XTrim(0, k, Trim{Strategy: TrimMaxLen, MaxLen: int64(r.IntN(20))})
						}
						if err != nil {
							return err
						}
					}
					return nil
				})
				g.checkGroupInvariants("s")
			}
		})
	}
}

func TestGroupReadHistory(t *testing.T) {
	g := newGroupEnv(t)
	g.update(func(tx *Tx) error {
		return tx.XGroupCreate(0, []byte("x"), []byte("g"), ID{}, true, true, EntriesReadUnknown)
	})
	if got := g.read("x", "g", "c", 0, ID{}, false); got != "[]" {
		t.Fatalf("empty history: %s", got)
	}
	if got := g.read("x", "g", "c", 0, MaxID, true); got != "nil" {
		t.Fatalf("nothing new: %s", got)
	}
	g.add("x", id(1))
	g.read("x", "g", "c", 0, MaxID, true)
	g.update(func(tx *Tx) error {
		_, _, err := tx.XAdd(0, []byte("x"), &XAddArgs{ID: id(2), Fields: fv("f", "B"), Trim: Trim{Strategy: TrimMaxLen, MaxLen: 1}})
		return err
	})
	g.read("x", "g", "c", 0, MaxID, true)
	// Bug #5570: the trimmed entry comes back with nil fields.
	if got := g.read("x", "g", "c", 0, ID{0, 1}, false); got != "[1-0:nil 2-0]" {
		t.Fatalf("history: %s", got)
	}
	// History reads count deliveries of live entries only.
	if got := g.pending("x", "g", all(10)); got != "[1-0/c/0/1 2-0/c/0/2]" {
		t.Fatalf("pending: %s", got)
	}
	// NOACK delivers without a PEL entry.
	g.add("x", id(3))
	g.update(func(tx *Tx) error {
		_, err := tx.XReadGroup(0, []byte("x"), ReadGroupArgs{Group: []byte("g"), Consumer: []byte("d"), NoAck: true}, MaxID, true)
		return err
	})
	if got := g.summary("x", "g"); got != "2 1-0 2-0 c:2" {
		t.Fatalf("after NOACK: %s", got)
	}
	// Woken rule: entries added then deleted still serve a blocked
	// reader, with nothing (redis-server 7.0.15 replies {x {}}).
	g.add("x", id(5))
	g.update(func(tx *Tx) error { _, err := tx.XDel(0, []byte("x"), ids(5)); return err })
	var res ReadGroupResult
	g.update(func(tx *Tx) error {
		var err error
		res, err = tx.XReadGroup(0, []byte("x"), ReadGroupArgs{Group: []byte("g"), Consumer: []byte("c"), Woken: true}, MaxID, true)
		return err
	})
	if !res.Served || len(res.Entries) != 0 {
		t.Fatalf("woken: %+v", res)
	}
	if got := g.read("x", "g", "c", 0, MaxID, true); got != "nil" {
		t.Fatalf("not woken: %s", got)
	}
	g.checkGroupInvariants("x")
}

func TestGroupInfoFull(t *testing.T) {
	g := newGroupEnv(t)
	g.add("s", id(1), id(2), id(3))
	g.create("s", "b", ID{})
	g.create("s", "a", id(2))
	g.read("s", "b", "y", 2, MaxID, true)
	g.now += 5
	g.read("s", "b", "x", 0, MaxID, true)
	var in *Info
	g.view(func(tx *Tx) error {
		var err error
		in, err = tx.XInfo(0, []byte("s"), true, 1)
		return err
	})
	if in.Groups != 2 || len(in.GroupDetails) != 2 {
		t.Fatalf("groups: %d %d", in.Groups, len(in.GroupDetails))
	}
	a, b := in.GroupDetails[0], in.GroupDetails[1]
	if string(a.Name) != "a" || len(a.PEL) != 0 || len(a.Consumers) != 0 || a.Lag != nil {
		t.Fatalf("group a: %+v", a)
	}
	got := fmt.Sprintf("%s %d %s %s/%s/%d/%d", b.Name, b.Pending, optInt(b.EntriesRead), b.PEL[0].ID, b.PEL[0].Consumer, b.PEL[0].DeliveryTime, b.PEL[0].Deliveries)
	if got != "b 3 3 1-0/y/1000000/1" || len(b.PEL) != 1 {
		t.Fatalf("group b: %s (%d)", got, len(b.PEL))
	}
	x, y := b.Consumers[0], b.Consumers[1]
	got = fmt.Sprintf("%s %d %d %s/%d | %s %d %d %d", x.Name, x.SeenTime, x.Pending, x.PEL[0].ID, x.PEL[0].DeliveryTime, y.Name, y.SeenTime, y.Pending, len(y.PEL))
	if got != "x 1000005 1 3-0/1000005 | y 1000000 2 1" {
		t.Fatalf("consumers: %s", got)
	}
}

// Groups live under the stream's version: RENAME carries them, DEL drops
// them, and they survive a restart.
func TestGroupKeyspace(t *testing.T) {
	dir := t.TempDir()
	open := func() (*storage.DB, *Engine) {
		db, err := storage.Open(storage.Options{Dir: dir, CacheSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		e, err := Open(db, Options{Now: func() int64 { return 42 }})
		if err != nil {
			t.Fatal(err)
		}
		return db, e
	}
	db, e := open()
	g := &groupEnv{t: t, e: e, now: 42}
	g.add("s", id(1), id(2))
	g.create("s", "g", ID{})
	g.read("s", "g", "c", 1, MaxID, true)
	g.update(func(tx *Tx) error { _, err := tx.Rename(0, []byte("s"), []byte("t"), false); return err })
	if got := g.groups("t"); got != "g/1/1/1-0/1/1" {
		t.Fatalf("after rename: %q", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, e = open()
	defer db.Close()
	g = &groupEnv{t: t, e: e, now: 42}
	if got := g.summary("t", "g"); got != "1 1-0 1-0 c:1" {
		t.Fatalf("after restart: %q", got)
	}
	g.checkGroupInvariants("t")
	g.update(func(tx *Tx) error { _, err := tx.Del(0, []byte("t")); return err })
	g.add("t", id(1))
	if got := g.groups("t"); got != "" {
		t.Fatalf("groups survived DEL: %q", got)
	}
}
