package storage

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRefusesUnknownFormat(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	b.Set(storeKey(recordFormat), []byte("99"))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open(Options{Dir: dir})
	if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), `"99"`) {
		t.Fatalf("want ErrUnknownFormat naming the format, got %v", err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(Options{Dir: dir, Sync: SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	b.Set([]byte{tagMeta, 1}, []byte("v"))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, ok, err := db.Get([]byte{tagMeta, 1})
	if err != nil || !ok || string(v) != "v" {
		t.Fatalf("got %q %v %v", v, ok, err)
	}
}

// Concurrent waiters share syncs, and every waiter returns only after a
// sync that started once its write was applied.
func TestSyncerGroupsWaiters(t *testing.T) {
	const n = 50
	var applied, covered, syncs atomic.Int64
	allApplied := make(chan struct{})
	s := syncer{sync: func() error {
		if syncs.Add(1) == 1 {
			<-allApplied // hold the first sync until every writer queued
		}
		covered.Store(applied.Load())
		return nil
	}}
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := applied.Add(1)
			if mine == n {
				close(allApplied)
			}
			if err := s.wait(); err != nil {
				errs <- err.Error()
				return
			}
			if covered.Load() < mine {
				errs <- "returned before its write was synced"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if got := syncs.Load(); got > n/2 {
		t.Fatalf("%d syncs for %d waiters: not grouped", got, n)
	}
}

func TestGarbageCollected(t *testing.T) {
	db, err := Open(InMemory())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := db.NewBatch()
	b.Set(AppendEntryKey(nil, 0, []byte("s"), 5, 1, 1), []byte("x"))
	b.Set(AppendEntryKey(nil, 0, []byte("s"), 6, 1, 1), []byte("y"))
	b.Set(AppendGarbageKey(nil, 5), EncodeGarbageValue(0, []byte("s")))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.collectGarbage(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.Get(AppendEntryKey(nil, 0, []byte("s"), 5, 1, 1)); ok {
		t.Fatal("old version survived")
	}
	if _, ok, _ := db.Get(AppendEntryKey(nil, 0, []byte("s"), 6, 1, 1)); !ok {
		t.Fatal("live version dropped")
	}
	lo, hi := GarbageBounds()
	it, _ := db.NewIter(lo, hi)
	defer it.Close()
	if it.First() {
		t.Fatal("garbage record left behind")
	}
}
