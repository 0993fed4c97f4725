package stream

import (
	"fmt"
	"testing"
)

// benchPEL returns an engine holding stream "s" whose group "g" has pel
// entries pending for consumer "a" (of ten consumers' worth of names),
// built in batches of 100,000.
func benchPEL(b *testing.B, pel int) *Engine {
	b.Helper()
	e := openBenchEngine(b)
	k, grp := []byte("s"), []byte("g")
	if err := e.Update(func(tx *Tx) error {
		return tx.XGroupCreate(0, k, grp, ID{}, false, true, EntriesReadUnknown)
	}); err != nil {
		b.Fatal(err)
	}
	const batch = 100_000
	for done := 0; done < pel; done += batch {
		n := min(batch, pel-done)
		err := e.Update(func(tx *Tx) error {
			for i := 0; i < n; i++ {
				a := XAddArgs{ID: ID{uint64(done + i + 1), 0}, Fields: fv("f", "v")}
				if _, _, err := tx.XAdd(0, k, &a); err != nil {
					return err
				}
			}
			for c := 0; c < 10; c++ {
				ra := ReadGroupArgs{Group: grp, Consumer: []byte(fmt.Sprintf("c%d", c)), Count: int64(n / 10)}
				if c == 9 {
					ra.Count = int64(n - 9*(n/10))
				}
				if _, err := tx.XReadGroup(0, k, ra, MaxID, true); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return e
}

// BenchmarkXPendingSummary shows the summary is O(consumers + log PEL):
// the time per call stays flat from 10,000 to 1,000,000 pending entries.
func BenchmarkXPendingSummary(b *testing.B) {
	for _, pel := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("pel=%d", pel), func(b *testing.B) {
			e := benchPEL(b, pel)
			b.ResetTimer()
			for b.Loop() {
				err := e.View(func(tx *Tx) error {
					s, err := tx.XPendingSummary(0, []byte("s"), []byte("g"))
					if err == nil && s.Count != int64(pel) {
						err = fmt.Errorf("count %d", s.Count)
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkXAutoClaim claims 10 entries per call, walking the PEL with the
// returned cursor: the cost per call does not grow with the PEL.
func BenchmarkXAutoClaim(b *testing.B) {
	for _, pel := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("pel=%d", pel), func(b *testing.B) {
			e := benchPEL(b, pel)
			var cursor ID
			b.ResetTimer()
			for b.Loop() {
				err := e.Update(func(tx *Tx) error {
					r, err := tx.XAutoClaim(0, []byte("s"), []byte("g"), []byte("bob"), AutoClaimArgs{Start: cursor, Count: 10})
					cursor = r.Next
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkXPendingAfterAck is the summary and XAUTOCLAIM from 0-0 on a
// PEL whose first 99% were acknowledged: the deletions lie at its head
// until a compaction drops them, and the cached PEL bounds step past them.
func BenchmarkXPendingAfterAck(b *testing.B) {
	const pel, acked = 100_000, 99_000
	e := benchPEL(b, pel)
	k, grp := []byte("s"), []byte("g")
	for lo := 1; lo <= acked; lo += 1000 {
		ids := make([]ID, 0, 1000)
		for i := lo; i < lo+1000; i++ {
			ids = append(ids, ID{uint64(i), 0})
		}
		if err := e.Update(func(tx *Tx) error { _, err := tx.XAck(0, k, grp, ids); return err }); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("summary", func(b *testing.B) {
		for b.Loop() {
			err := e.View(func(tx *Tx) error {
				s, err := tx.XPendingSummary(0, k, grp)
				if err == nil && (s.Count != pel-acked || s.First != (ID{acked + 1, 0})) {
					err = fmt.Errorf("summary %d from %s", s.Count, s.First)
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("autoclaim", func(b *testing.B) {
		for b.Loop() {
			err := e.Update(func(tx *Tx) error {
				r, err := tx.XAutoClaim(0, k, grp, []byte("bob"), AutoClaimArgs{Count: 1})
				if err == nil && (len(r.Claimed) != 1 || r.Claimed[0].ID.Ms <= acked) {
					err = fmt.Errorf("claimed %v", r.Claimed)
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
