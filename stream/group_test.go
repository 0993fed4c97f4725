package stream

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

// groupEnv is an engine on an in-memory store with a settable clock.
type groupEnv struct {
	t   *testing.T
	e   *Engine
	now int64
}

func newGroupEnv(t *testing.T) *groupEnv {
	g := &groupEnv{t: t, now: 1_000_000}
	g.e = openTestEngine(t, Options{Now: func() int64 { return g.now }})
	return g
}

func (g *groupEnv) update(fn func(tx *Tx) error) {
	g.t.Helper()
	if err := g.e.Update(fn); err != nil {
		g.t.Fatal(err)
	}
}

func (g *groupEnv) view(fn func(tx *Tx) error) {
	g.t.Helper()
	if err := g.e.View(fn); err != nil {
		g.t.Fatal(err)
	}
}

func (g *groupEnv) add(key string, ids ...ID) {
	g.t.Helper()
	g.update(func(tx *Tx) error {
		for _, id := range ids {
			if _, _, err := tx.XAdd(0, []byte(key), &XAddArgs{ID: id, Fields: fv("f", id.String())}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (g *groupEnv) create(key, group string, id ID) {
	g.t.Helper()
	g.update(func(tx *Tx) error {
		return tx.XGroupCreate(0, []byte(key), []byte(group), id, false, false, EntriesReadUnknown)
	})
}

func (g *groupEnv) read(key, group, consumer string, count int64, after ID, newOnly bool) string {
	g.t.Helper()
	var res ReadGroupResult
	g.update(func(tx *Tx) error {
		var err error
		res, err = tx.XReadGroup(0, []byte(key), ReadGroupArgs{Group: []byte(group), Consumer: []byte(consumer), Count: count}, after, newOnly)
		return err
	})
	if !res.Served {
		return "nil"
	}
	return fmtEntries(res.Entries)
}

func fmtEntries(es []Entry) string {
	var b strings.Builder
	b.WriteString("[")
	for i, e := range es {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(e.ID.String())
		if e.Fields == nil {
			b.WriteString(":nil")
		}
	}
	b.WriteString("]")
	return b.String()
}

func fmtIDs(ids []ID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

func fmtPending(ps []PendingEntry) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprintf("%s/%s/%d/%d", p.ID, p.Consumer, p.Idle, p.Deliveries)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func (g *groupEnv) pending(key, group string, a PendingRangeArgs) string {
	g.t.Helper()
	var ps []PendingEntry
	g.view(func(tx *Tx) error {
		var err error
		ps, err = tx.XPendingRange(0, []byte(key), []byte(group), a)
		return err
	})
	return fmtPending(ps)
}

func all(count int64) PendingRangeArgs {
	return PendingRangeArgs{Start: ID{}, End: MaxID, Count: count}
}

func (g *groupEnv) summary(key, group string) string {
	g.t.Helper()
	var s PendingSummary
	g.view(func(tx *Tx) error {
		var err error
		s, err = tx.XPendingSummary(0, []byte(key), []byte(group))
		return err
	})
	if s.Count == 0 {
		return "0"
	}
	out := fmt.Sprintf("%d %s %s", s.Count, s.First, s.Last)
	for _, c := range s.Consumers {
		out += fmt.Sprintf(" %s:%d", c.Name, c.Pending)
	}
	return out
}

// groups formats XINFO GROUPS as name/consumers/pending/last/entries-read/lag.
func (g *groupEnv) groups(key string) string {
	g.t.Helper()
	var gs []GroupInfo
	g.view(func(tx *Tx) error {
		var err error
		gs, err = tx.XInfoGroups(0, []byte(key))
		return err
	})
	s := make([]string, len(gs))
	for i, gi := range gs {
		s[i] = fmt.Sprintf("%s/%d/%d/%s/%s/%s", gi.Name, gi.Consumers, gi.Pending, gi.LastDelivered, optInt(gi.EntriesRead), optInt(gi.Lag))
	}
	return strings.Join(s, " ")
}

func optInt(p *int64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func id(ms uint64) ID { return ID{ms, 0} }

func ids(ms ...uint64) []ID {
	out := make([]ID, len(ms))
	for i, m := range ms {
		out[i] = id(m)
	}
	return out
}

// checkGroupInvariants scans every group record of key and checks the
// stored counts against the records they count, and that the two PEL
// indexes agree.
func (g *groupEnv) checkGroupInvariants(key string) {
	g.t.Helper()
	g.view(func(tx *Tx) error {
		s, ok, err := tx.loadStream(0, []byte(key))
		if err != nil || !ok {
			return err
		}
		names, recs, err := tx.groupNames(s)
		if err != nil {
			return err
		}
		if uint64(len(names)) != s.sm.Groups {
			g.t.Errorf("stream says %d groups, %d stored", s.sm.Groups, len(names))
		}
		for i, name := range names {
			op := &groupOp{tx: tx, s: s, name: name, rec: recs[i], consumers: map[string]*consumerState{}}
			cs, err := op.consumerList()
			if err != nil {
				return err
			}
			if uint64(len(cs)) != recs[i].Consumers {
				g.t.Errorf("group %s: %d consumers stored, count %d", name, len(cs), recs[i].Consumers)
			}
			owners := map[string]uint64{}
			var n uint64
			err = tx.walkPEL(op, nil, false, ID{}, MaxID, func(id ID, nk *nack) bool {
				n++
				owners[string(nk.Owner)]++
				if _, ok, _ := tx.r.Get(op.ownerKey(nk.Owner, id)); !ok {
					g.t.Errorf("group %s: %s missing from %s's index", name, id, nk.Owner)
				}
				return true
			})
			if err != nil {
				return err
			}
			if n != recs[i].Pending {
				g.t.Errorf("group %s: PEL holds %d, count %d", name, n, recs[i].Pending)
			}
			var indexed uint64
			for _, c := range cs {
				var m uint64
				err := tx.walkPEL(op, c.name, true, ID{}, MaxID, func(id ID, nk *nack) bool {
					m++
					if string(nk.Owner) != string(c.name) {
						g.t.Errorf("group %s: %s indexed under %s, owned by %s", name, id, c.name, nk.Owner)
					}
					return true
				})
				if err != nil {
					return err
				}
				if m != c.rec.Pending || owners[string(c.name)] != m {
					g.t.Errorf("group %s consumer %s: count %d, index %d, owned %d", name, c.name, c.rec.Pending, m, owners[string(c.name)])
				}
				indexed += m
			}
			if indexed != n {
				g.t.Errorf("group %s: per-owner index holds %d, PEL %d", name, indexed, n)
			}
		}
		return nil
	})
}

func TestGroupAdmin(t *testing.T) {
	g := newGroupEnv(t)
	k, grp := []byte("s"), []byte("g")
	err := g.e.Update(func(tx *Tx) error {
		return tx.XGroupCreate(0, k, grp, ID{}, true, false, EntriesReadUnknown)
	})
	if !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("create without MKSTREAM: %v", err)
	}
	g.update(func(tx *Tx) error {
		return tx.XGroupCreate(0, k, grp, ID{}, true, true, EntriesReadUnknown)
	})
	if got := g.groups("s"); got != "g/0/0/0-0/nil/0" {
		t.Fatalf("after MKSTREAM: %s", got)
	}
	err = g.e.Update(func(tx *Tx) error {
		return tx.XGroupCreate(0, k, grp, ID{}, false, true, EntriesReadUnknown)
	})
	if !errors.Is(err, ErrGroupExists) {
		t.Fatalf("duplicate: %v", err)
	}
	for _, c := range []struct {
		name string
		fn   func(tx *Tx) error
		want error
	}{
		{"setid", func(tx *Tx) error { return tx.XGroupSetID(0, k, []byte("x"), ID{}, false, -1) }, ErrNoGroup},
		{"setid no key", func(tx *Tx) error { return tx.XGroupSetID(0, []byte("no"), grp, ID{}, false, -1) }, ErrNoSuchKey},
		{"createconsumer", func(tx *Tx) error { _, err := tx.XGroupCreateConsumer(0, k, []byte("x"), []byte("c")); return err }, ErrNoGroup},
		{"delconsumer", func(tx *Tx) error { _, err := tx.XGroupDelConsumer(0, k, []byte("x"), []byte("c")); return err }, ErrNoGroup},
		{"destroy no key", func(tx *Tx) error { _, err := tx.XGroupDestroy(0, []byte("no"), grp); return err }, ErrNoSuchKey},
		{"readgroup", func(tx *Tx) error {
			_, err := tx.XReadGroup(0, k, ReadGroupArgs{Group: []byte("x"), Consumer: []byte("c")}, MaxID, true)
			return err
		}, ErrNoGroup},
		{"pending", func(tx *Tx) error { _, err := tx.XPendingSummary(0, []byte("no"), grp); return err }, ErrNoGroup},
		{"claim", func(tx *Tx) error { _, err := tx.XClaim(0, []byte("no"), grp, []byte("c"), ClaimArgs{}); return err }, ErrNoGroup},
		{"autoclaim", func(tx *Tx) error {
			_, err := tx.XAutoClaim(0, k, []byte("x"), []byte("c"), AutoClaimArgs{Count: 1})
			return err
		}, ErrNoGroup},
		{"consumers", func(tx *Tx) error { _, err := tx.XInfoConsumers(0, k, []byte("x")); return err }, ErrNoGroup},
		{"check key", func(tx *Tx) error { return tx.CheckGroup(0, []byte("no"), grp) }, ErrNoSuchKey},
		{"check group", func(tx *Tx) error { return tx.CheckGroup(0, k, []byte("x")) }, ErrNoGroup},
	} {
		if err := g.e.Update(c.fn); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	var acked int64
	g.update(func(tx *Tx) error {
		var err error
		acked, err = tx.XAck(0, []byte("no"), grp, ids(1))
		return err
	})
	if acked != 0 {
		t.Fatalf("XACK of a missing key: %d", acked)
	}
	var created []bool
	g.update(func(tx *Tx) error {
		for _, c := range []string{"b", "a", "b", ""} {
			ok, err := tx.XGroupCreateConsumer(0, k, grp, []byte(c))
			if err != nil {
				return err
			}
			created = append(created, ok)
		}
		return nil
	})
	if fmt.Sprint(created) != "[true true false true]" {
		t.Fatalf("createconsumer: %v", created)
	}
	var cs []ConsumerInfo
	g.now += 7
	g.view(func(tx *Tx) error {
		var err error
		cs, err = tx.XInfoConsumers(0, k, grp)
		return err
	})
	if fmt.Sprintf("%q %d", []string{string(cs[0].Name), string(cs[1].Name), string(cs[2].Name)}, cs[0].Idle) != `["" "a" "b"] 7` {
		t.Fatalf("consumers: %+v", cs)
	}
	var destroyed []bool
	g.update(func(tx *Tx) error {
		for range 2 {
			ok, err := tx.XGroupDestroy(0, k, grp)
			if err != nil {
				return err
			}
			destroyed = append(destroyed, ok)
		}
		return nil
	})
	if fmt.Sprint(destroyed) != "[true false]" || g.groups("s") != "" {
		t.Fatalf("destroy: %v, groups %q", destroyed, g.groups("s"))
	}
	g.checkGroupInvariants("s")
	// Nothing of the group is left under the stream's version.
	g.view(func(tx *Tx) error {
		s, _, err := tx.loadStream(0, k)
		if err != nil {
			return err
		}
		for _, kind := range []storage.Kind{storage.KindGroup, storage.KindConsumer, storage.KindPELByID, storage.KindPELByConsumer} {
			lo, hi := storage.KindBounds(0, k, s.meta.Version, kind)
			it, err := tx.r.NewIter(lo, hi)
			if err != nil {
				return err
			}
			if it.First() {
				t.Errorf("kind %d: records left after destroy", kind)
			}
			it.Close()
		}
		return nil
	})
}

// TestGroupChanges pins which group commands count as changes: Redis 7.0
// signals no modified key for any of them (WATCH survives; checked on
// redis-server), except a stream created by MKSTREAM; XGROUP DESTROY
// wakes blocked readers.
func TestGroupChanges(t *testing.T) {
	var got []Change
	g := &groupEnv{t: t, now: 1}
	g.e = openTestEngine(t, Options{Now: func() int64 { return g.now }, OnCommit: func(c []Change) { got = append(got, c...) }})
	g.update(func(tx *Tx) error {
		return tx.XGroupCreate(0, []byte("s"), []byte("g"), ID{}, true, true, EntriesReadUnknown)
	})
	g.add("s", id(1), id(2))
	got = nil
	g.create("s", "h", ID{})
	g.read("s", "g", "c", 0, MaxID, true)
	g.read("s", "g", "c", 0, ID{}, false)
	g.update(func(tx *Tx) error {
		if _, err := tx.XClaim(0, []byte("s"), []byte("g"), []byte("d"), ClaimArgs{IDs: ids(1)}); err != nil {
			return err
		}
		if _, err := tx.XAutoClaim(0, []byte("s"), []byte("g"), []byte("d"), AutoClaimArgs{Count: 10}); err != nil {
			return err
		}
		if _, err := tx.XAck(0, []byte("s"), []byte("g"), ids(1)); err != nil {
			return err
		}
		if err := tx.XGroupSetID(0, []byte("s"), []byte("g"), ID{}, true, 5); err != nil {
			return err
		}
		if _, err := tx.XGroupCreateConsumer(0, []byte("s"), []byte("g"), []byte("e")); err != nil {
			return err
		}
		_, err := tx.XGroupDelConsumer(0, []byte("s"), []byte("g"), []byte("d"))
		return err
	})
	if len(got) != 0 {
		t.Fatalf("group commands noted changes: %+v", got)
	}
	g.update(func(tx *Tx) error { _, err := tx.XGroupDestroy(0, []byte("s"), []byte("g")); return err })
	if len(got) != 1 || got[0].Kind != GroupDestroyed || string(got[0].Key) != "s" {
		t.Fatalf("destroy noted %+v", got)
	}
	g.checkGroupInvariants("s")
}
