package stream

import (
	"fmt"
	"testing"
)

// BenchmarkReadGroupAck is the consumer-group hot path of `make bench`:
// XREADGROUP COUNT 10 ">" then XACK of the IDs delivered, each in its own
// transaction, on a stream of 100,000 entries. When the group has read
// them all it is moved back to the start (outside the timer). With
// backlog > 0 another consumer keeps that many entries pending, as the
// other clients of `make bench` do, so the PEL is never empty.
func BenchmarkReadGroupAck(b *testing.B) {
	for _, backlog := range []int64{0, 1000} {
		b.Run(fmt.Sprintf("backlog=%d", backlog), func(b *testing.B) { benchReadGroupAck(b, backlog) })
	}
}

func benchReadGroupAck(b *testing.B, backlog int64) {
	const fill = 100_000
	e := openBenchEngine(b)
	k, grp, cons := []byte("s"), []byte("g"), []byte("c1")
	for lo := 1; lo <= fill; lo += 1000 {
		if err := e.Update(func(tx *Tx) error {
			for i := lo; i < lo+1000; i++ {
				a := XAddArgs{ID: ID{uint64(i), 0}, Fields: fv("field", "value")}
				if _, _, err := tx.XAdd(0, k, &a); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Update(func(tx *Tx) error {
		if err := tx.XGroupCreate(0, k, grp, ID{}, false, false, EntriesReadUnknown); err != nil {
			return err
		}
		if backlog == 0 {
			return nil
		}
		_, err := tx.XReadGroup(0, k, ReadGroupArgs{Group: grp, Consumer: []byte("other"), Count: backlog}, MaxID, true)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	ra := ReadGroupArgs{Group: grp, Consumer: cons, Count: 10}
	ids := make([]ID, 0, 10)
	b.ReportAllocs()
	for b.Loop() {
		ids = ids[:0]
		err := e.Update(func(tx *Tx) error {
			r, err := tx.XReadGroup(0, k, ra, MaxID, true)
			for _, en := range r.Entries {
				ids = append(ids, en.ID)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if len(ids) == 0 {
			b.StopTimer()
			if err := e.Update(func(tx *Tx) error {
				return tx.XGroupSetID(0, k, grp, ID{uint64(backlog), 0}, false, EntriesReadUnknown)
			}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			continue
		}
		var acked int64
		err = e.Update(func(tx *Tx) error {
			var err error
			acked, err = tx.XAck(0, k, grp, ids)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if acked != int64(len(ids)) {
			b.Fatalf("acked %d of %d", acked, len(ids))
		}
	}
}
