package stream

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestViewDuringApply runs Views while a group's batch is being applied
// (before and after Pebble has it): they must not wait for the writer,
// and each must see one state, the one before the XADD or the one after
// it, in its metadata and its entries alike.
func TestViewDuringApply(t *testing.T) {
	for _, when := range []bool{false, true} {
		t.Run(fmt.Sprintf("applied=%v", when), func(t *testing.T) {
			var e *Engine
			armed := false
			var seen []string
			opts := Options{applyHook: func(applied bool) {
				if !armed || applied != when {
					return
				}
				// Runs in the writer with Engine.mu released: a View that
				// waited for the writer would deadlock here.
				mustView(t, e, func(tx *Tx) error {
					n, err := tx.XLen(0, []byte("s"))
					if err != nil {
						return err
					}
					es, err := tx.XRange(0, []byte("s"), ID{}, MaxID, -1, false)
					if err != nil {
						return err
					}
					st, _, err := tx.SeqState(0, []byte("s"))
					if err != nil {
						return err
					}
					seen = append(seen, fmt.Sprintf("xlen=%d entries=%d last_seq=%d", n, len(es), st.LastSeq))
					return nil
				})
			}}
			e = openTestEngine(t, opts)
			for range 3 {
				if _, err := xadd(t, e, "s", XAddArgs{Auto: true, Fields: fv("f", "v")}); err != nil {
					t.Fatal(err)
				}
			}
			// The first View fills the cache with the 3-entry state.
			mustView(t, e, func(tx *Tx) error { _, err := tx.XLen(0, []byte("s")); return err })
			armed = true
			if _, err := xadd(t, e, "s", XAddArgs{Auto: true, Fields: fv("f", "v")}); err != nil {
				t.Fatal(err)
			}
			armed = false
			want := "xlen=3 entries=3 last_seq=3"
			if when {
				want = "xlen=4 entries=4 last_seq=4"
			}
			if len(seen) != 1 || seen[0] != want {
				t.Fatalf("View during apply saw %q, want [%q]", seen, want)
			}
			// And once published, the cache serves the new state.
			mustView(t, e, func(tx *Tx) error {
				if n, _ := tx.XLen(0, []byte("s")); n != 4 {
					t.Fatalf("XLEN after the apply = %d, want 4", n)
				}
				return nil
			})
		})
	}
}

// TestViewsConsistentUnderWrites has readers check, while writers append
// and trim, that a View's metadata and entries always agree.
func TestViewsConsistentUnderWrites(t *testing.T) {
	e := openTestEngine(t, Options{})
	keys := []string{"a", "b", "c"}
	done := make(chan struct{})
	errs := make(chan error, 8)
	for w := range 2 {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				key := []byte(keys[(i+w)%len(keys)])
				a := XAddArgs{Auto: true, Fields: fv("f", "v")}
				if i%7 == 0 {
					a.Trim = Trim{Strategy: TrimMaxLen, MaxLen: 50}
				}
				if err := e.Update(func(tx *Tx) error { _, _, err := tx.XAdd(0, key, &a); return err }); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 2 {
		go func() {
			for range 1000 {
				for _, k := range keys {
					err := e.View(func(tx *Tx) error {
						n, err := tx.XLen(0, []byte(k))
						if err != nil {
							return err
						}
						es, err := tx.XRange(0, []byte(k), ID{}, MaxID, -1, false)
						if err != nil {
							return err
						}
						if int64(len(es)) != n {
							return fmt.Errorf("%s: XLEN %d but XRANGE has %d entries", k, n, len(es))
						}
						return nil
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			close(done)
			t.Fatal(err)
		}
	}
	close(done)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestViewWhileGroupBuilds runs a View from inside a write function, that
// is while the leader builds its group: the View must not wait for the
// group (it would deadlock here) and must see the committed state only,
// none of the group's writes, whether the metadata cache holds the stream
// or not.
func TestViewWhileGroupBuilds(t *testing.T) {
	e := openTestEngine(t, Options{})
	for range 3 {
		if _, err := xadd(t, e, "s", XAddArgs{Auto: true, Fields: fv("f", "v")}); err != nil {
			t.Fatal(err)
		}
	}
	for i, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached=%v", cached), func(t *testing.T) {
			if cached {
				mustView(t, e, func(tx *Tx) error { _, err := tx.XLen(0, []byte("s")); return err })
			} else {
				e.cache.flush(0, true)
			}
			committed := 3 + i
			var seen string
			err := e.Update(func(tx *Tx) error {
				if _, _, err := tx.XAdd(0, []byte("s"), &XAddArgs{Auto: true, Fields: fv("f", "v")}); err != nil {
					return err
				}
				done := make(chan error, 1)
				go func() {
					done <- e.View(func(v *Tx) error {
						n, err := v.XLen(0, []byte("s"))
						if err != nil {
							return err
						}
						es, err := v.XRange(0, []byte("s"), ID{}, MaxID, -1, false)
						if err != nil {
							return err
						}
						seen = fmt.Sprintf("xlen=%d entries=%d", n, len(es))
						return nil
					})
				}()
				select {
				case err := <-done:
					return err
				case <-time.After(30 * time.Second):
					return errors.New("the View waited for the group being built")
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("xlen=%d entries=%d", committed, committed); seen != want {
				t.Fatalf("View during the build saw %q, want the committed %q", seen, want)
			}
			mustView(t, e, func(tx *Tx) error {
				n, err := tx.XLen(0, []byte("s"))
				if err == nil && n != int64(committed+1) {
					t.Errorf("after the group: xlen=%d, want %d", n, committed+1)
				}
				return err
			})
		})
	}
}
