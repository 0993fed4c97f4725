package storage

import (
	"sync"
	"testing"
)

// TestPauseGC checks that a paused collector drops nothing, that it
// collects again once every pause is resumed, and that resume is
// idempotent.
func TestPauseGC(t *testing.T) {
	db := openMem(t)
	// Paused before the garbage exists: the store's own collector may
	// run at any time.
	r1, r2 := db.PauseGC(), db.PauseGC()
	old := AppendEntryKey(nil, 0, []byte("s"), 5, 1, 1)
	b := db.NewBatch()
	b.Set(old, []byte("x"))
	b.Set(AppendGarbageKey(nil, 5), EncodeGarbageValue(0, []byte("s")))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	present := func() bool {
		t.Helper()
		_, ok, err := db.Get(old)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if err := db.collectGarbage(); err != nil {
		t.Fatal(err)
	}
	if !present() {
		t.Fatal("a paused collector dropped data")
	}
	r1()
	r1() // a second call must not undo r2's pause
	if err := db.collectGarbage(); err != nil {
		t.Fatal(err)
	}
	if !present() {
		t.Fatal("collector ran with one pause still open")
	}
	r2()
	if err := db.collectGarbage(); err != nil {
		t.Fatal(err)
	}
	if present() {
		t.Fatal("collector did not run after resume")
	}
}

// TestPauseGCConcurrent pauses and resumes while passes run, for the race
// detector, and checks the collector ends up running.
func TestPauseGCConcurrent(t *testing.T) {
	db := openMem(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				resume := db.PauseGC()
				db.KickGC()
				resume()
			}
		}()
	}
	for range 100 {
		if err := db.collectGarbage(); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
	db.gcMu.Lock()
	n := db.gcPaused
	db.gcMu.Unlock()
	if n != 0 {
		t.Fatalf("gcPaused = %d after every resume", n)
	}
}
