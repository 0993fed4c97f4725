package stream

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestReadNewAfterSetID covers the paths readNew and XAck take through
// PEL entries found with one iterator: after XGROUP SETID moves the group
// back, ">" meets entries still pending (moved to the reader with one
// delivery), pending entries whose stream entry is gone (left alone) and
// acked ones (added anew); XACK counts repeated and unknown IDs once or
// not at all.
func TestReadNewAfterSetID(t *testing.T) {
	e := openTestEngine(t, Options{})
	k, grp := []byte("s"), []byte("g")
	update := func(fn func(tx *Tx) error) {
		t.Helper()
		if err := e.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	read := func(consumer string, count int64) []ID {
		t.Helper()
		var ids []ID
		update(func(tx *Tx) error {
			r, err := tx.XReadGroup(0, k, ReadGroupArgs{Group: grp, Consumer: []byte(consumer), Count: count}, MaxID, true)
			for _, en := range r.Entries {
				ids = append(ids, en.ID)
			}
			return err
		})
		return ids
	}
	ack := func(ids ...ID) int64 {
		t.Helper()
		var n int64
		update(func(tx *Tx) error {
			var err error
			n, err = tx.XAck(0, k, grp, ids)
			return err
		})
		return n
	}
	// pel lists the PEL as "id:owner:deliveries", by ID and, per owner,
	// through the per-owner index, which must agree.
	pel := func() string {
		t.Helper()
		var all, owned []string
		update(func(tx *Tx) error {
			ps, err := tx.XPendingRange(0, k, grp, PendingRangeArgs{End: MaxID, Count: 100})
			if err != nil {
				return err
			}
			for _, p := range ps {
				all = append(all, fmt.Sprintf("%d:%s:%d", p.ID.Ms, p.Consumer, p.Deliveries))
			}
			s, err := tx.XPendingSummary(0, k, grp)
			if err != nil {
				return err
			}
			if s.Count != int64(len(ps)) {
				t.Errorf("summary count %d, %d listed", s.Count, len(ps))
			}
			for _, c := range s.Consumers {
				cs, err := tx.XPendingRange(0, k, grp, PendingRangeArgs{End: MaxID, Count: 100, Consumer: c.Name, HasConsumer: true})
				if err != nil {
					return err
				}
				if int64(len(cs)) != c.Pending {
					t.Errorf("consumer %s: count %d, %d listed", c.Name, c.Pending, len(cs))
				}
				for _, p := range cs {
					owned = append(owned, fmt.Sprintf("%d:%s:%d", p.ID.Ms, p.Consumer, p.Deliveries))
				}
			}
			return nil
		})
		slices.Sort(owned)
		if o, a := strings.Join(owned, " "), strings.Join(slices.Sorted(slices.Values(all)), " "); o != a {
			t.Errorf("per-owner index %q, PEL %q", o, a)
		}
		return strings.Join(all, " ")
	}
	id := func(ms uint64) ID { return ID{ms, 0} }

	update(func(tx *Tx) error {
		for i := uint64(1); i <= 6; i++ {
			if _, _, err := tx.XAdd(0, k, &XAddArgs{ID: id(i), Fields: fv("f", "v")}); err != nil {
				return err
			}
		}
		return tx.XGroupCreate(0, k, grp, ID{}, false, false, EntriesReadUnknown)
	})
	if got := read("a", 4); !slices.Equal(got, []ID{id(1), id(2), id(3), id(4)}) {
		t.Fatalf("a read %v", got)
	}
	update(func(tx *Tx) error { _, err := tx.XDel(0, k, []ID{id(2)}); return err })
	if n := ack(id(3)); n != 1 {
		t.Fatalf("ack 3: %d", n)
	}
	update(func(tx *Tx) error { return tx.XGroupSetID(0, k, grp, ID{}, false, EntriesReadUnknown) })
	if got := read("b", 0); !slices.Equal(got, []ID{id(1), id(3), id(4), id(5), id(6)}) {
		t.Fatalf("b read %v", got)
	}
	if got, want := pel(), "1:b:1 2:a:1 3:b:1 4:b:1 5:b:1 6:b:1"; got != want {
		t.Fatalf("PEL %q, want %q", got, want)
	}
	if got := read("b", 0); got != nil {
		t.Fatalf("nothing new, read %v", got)
	}
	if n := ack(id(4), id(1), id(1), id(2), id(99)); n != 3 {
		t.Fatalf("ack: %d, want 3", n)
	}
	if got, want := pel(), "3:b:1 5:b:1 6:b:1"; got != want {
		t.Fatalf("PEL %q, want %q", got, want)
	}
	if n := ack(); n != 0 {
		t.Fatalf("empty ack: %d", n)
	}
}
