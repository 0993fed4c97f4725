package storage

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// openMem opens an in-memory store, closed when the test ends.
func openMem(t *testing.T) *DB {
	t.Helper()
	db, err := Open(InMemory())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// writeAndClose opens a store in dir, commits one Set and closes it.
func writeAndClose(t *testing.T, opts Options, key, value []byte) {
	t.Helper()
	db, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	b.Set(key, value)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRefusesUnknownFormat(t *testing.T) {
	dir := t.TempDir()
	writeAndClose(t, Options{Dir: dir}, storeKey(recordFormat), []byte("99"))
	_, err := Open(Options{Dir: dir})
	if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), `"99"`) {
		t.Fatalf("want ErrUnknownFormat naming the format, got %v", err)
	}
}

// A format-3 store opens, keeps its data, and is recorded as format 4
// (it may then hold entry records of several entries); formats 2 and 5
// are refused.
func TestFormatUpgrade(t *testing.T) {
	for _, tc := range []struct {
		format string
		opens  bool
	}{{"2", false}, {"3", true}, {"4", true}, {"5", false}} {
		t.Run(tc.format, func(t *testing.T) {
			dir := t.TempDir()
			writeAndClose(t, Options{Dir: dir}, []byte{tagMeta, 1}, []byte("v"))
			writeAndClose(t, Options{Dir: dir}, storeKey(recordFormat), []byte(tc.format))
			db, err := Open(Options{Dir: dir})
			if !tc.opens {
				if !errors.Is(err, ErrUnknownFormat) {
					t.Fatalf("format %s: want ErrUnknownFormat, got %v", tc.format, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if v, ok, err := db.Get(storeKey(recordFormat)); err != nil || !ok || string(v) != "4" {
				t.Errorf("format record %q %v %v, want \"4\"", v, ok, err)
			}
			if v, ok, err := db.Get([]byte{tagMeta, 1}); err != nil || !ok || string(v) != "v" {
				t.Errorf("data %q %v %v", v, ok, err)
			}
		})
	}
}

func TestReopenKeepsData(t *testing.T) {
	dir := t.TempDir()
	writeAndClose(t, Options{Dir: dir, Sync: SyncAlways}, []byte{tagMeta, 1}, []byte("v"))
	db, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, ok, err := db.Get([]byte{tagMeta, 1})
	if err != nil || !ok || string(v) != "v" {
		t.Fatalf("got %q %v %v", v, ok, err)
	}
}

// Close leaves everything in tables, so the next Open has no log to
// replay: a read-only Pebble, which replays the log without flushing it,
// finds the write in a table.
func TestCloseLeavesNoLogToReplay(t *testing.T) {
	dir := t.TempDir()
	writeAndClose(t, Options{Dir: dir}, []byte{tagMeta, 1}, []byte("v"))
	ro, err := pebble.Open(dir, &pebble.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if n := ro.Metrics().Total().TablesCount; n == 0 {
		t.Errorf("no tables after Close: the write is only in the log")
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
			if err := s.wait(1, true); err != nil {
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

// After a sync period that saw n writers, the next sync waits until n
// writers are back rather than starting at the first; a Sync call (no
// writers) never waits.
func TestSyncerGathersReturningWriters(t *testing.T) {
	const n = 3
	var syncs atomic.Int64
	s := syncer{gatherMax: time.Hour, sync: func() error { syncs.Add(1); return nil }}
	// As if a sync that answered n writers had just ended, and took long.
	s.lastEnd, s.lastDur, s.expect = time.Now(), time.Hour, n
	pending := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.pending
	}
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.wait(1, true); err != nil {
				t.Error(err)
			}
		}()
		if i == n {
			break
		}
		for pending() < i {
			runtime.Gosched()
		}
		if got := syncs.Load(); got != 0 {
			t.Fatalf("a sync started with %d of %d writers back", i, n)
		}
	}
	wg.Wait()
	if got := syncs.Load(); got != 1 {
		t.Fatalf("%d syncs for %d returning writers, want 1", got, n)
	}
	s.mu.Lock()
	s.lastEnd, s.lastDur, s.expect = time.Now(), time.Hour, n
	s.mu.Unlock()
	if err := s.wait(0, true); err != nil { // would hang for an hour if it gathered
		t.Fatal(err)
	}
	// SyncApplied's callers hold their writers' replies: it never gathers.
	if err := s.wait(1, false); err != nil {
		t.Fatal(err)
	}
}

// applyOne applies a batch of one write, without waiting for a sync.
func applyOne(t *testing.T, db *DB, k, v string) {
	t.Helper()
	b := db.NewBatch()
	defer b.Close()
	if err := b.Set([]byte(k), []byte(v)); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(); err != nil {
		t.Fatal(err)
	}
}

// Syncs counts the syncs a store ran for writes, the writers they
// answered and how long they took; with appendfsync everysec a write
// waits for none.
func TestSyncsCounted(t *testing.T) {
	opts := InMemory()
	opts.Sync = SyncAlways
	db, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := db.Syncs(); got != (SyncStats{}) {
		t.Fatalf("fresh store: %+v, want none", got)
	}
	for _, writers := range []int{3, 1} {
		applyOne(t, db, "k", "v")
		if err := db.WaitDurable(writers); err != nil {
			t.Fatal(err)
		}
	}
	got := db.Syncs()
	if got.Count != 2 || got.Writers != 4 || got.Time <= 0 {
		t.Fatalf("after syncs for 3 and 1 writers: %+v, want 2 syncs, 4 writers, some time", got)
	}
	db.SetSyncMode(SyncEverySec)
	if err := db.WaitDurable(5); err != nil {
		t.Fatal(err)
	}
	if after := db.Syncs(); after.Writers != got.Writers {
		t.Fatalf("everysec: a write waited for a sync: %+v, was %+v", after, got)
	}

	// Applied counts what a SyncApplied covers; the sync is counted
	// whatever the mode, with the writers its caller answers.
	// Durable is what the last sync covered, whoever ran it.
	applied := db.Applied()
	if db.Durable() != applied {
		t.Fatalf("Durable %d after the syncs for every batch, Applied %d", db.Durable(), applied)
	}
	applyOne(t, db, "k", "w")
	if db.Applied() != applied+1 || db.Durable() != applied {
		t.Fatalf("Applied %d, Durable %d after one batch unsynced, was %d", db.Applied(), db.Durable(), applied)
	}
	if err := db.SyncApplied(2); err != nil {
		t.Fatal(err)
	}
	if db.Durable() != applied+1 {
		t.Fatalf("Durable %d after SyncApplied, want %d", db.Durable(), applied+1)
	}
	if after := db.Syncs(); after.Count != got.Count+1 || after.Writers != got.Writers+2 {
		t.Fatalf("SyncApplied(2): %+v, was %+v", after, got)
	}
}

// With appendfsync everysec, writes of more than walSyncAhead bytes are
// synced at once, not at the next second: Pebble would otherwise sync
// them on the committing thread when it switches memtables.
func TestEverySecSyncsAhead(t *testing.T) {
	opts := InMemory()
	opts.Sync = SyncEverySec
	opts.syncEvery = time.Hour // no sync but the ones ahead
	db, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	write := func(n int) {
		t.Helper()
		b := db.NewBatch()
		if err := b.Set([]byte("k"), make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		if err := b.Apply(); err != nil {
			t.Fatal(err)
		}
		b.Close()
		if err := db.WaitDurable(1); err != nil {
			t.Fatal(err)
		}
	}
	write(walSyncAhead / 2)
	if n := db.Syncs().Count; n != 0 {
		t.Fatalf("%d syncs after half of walSyncAhead, want none", n)
	}
	write(walSyncAhead / 2)
	deadline := time.Now().Add(10 * time.Second)
	for db.Syncs().Count == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no sync after walSyncAhead bytes")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestGarbageCollected(t *testing.T) {
	db := openMem(t)
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

func TestBatchRollbackTo(t *testing.T) {
	db := openMem(t)
	k := func(s string) []byte { return []byte{tagMeta, s[0]} }
	b := db.NewBatch()
	start := b.Mark()
	b.Set(k("a"), []byte("1"))
	kept := b.Mark()
	if kept == start {
		t.Fatal("a write left the mark unchanged")
	}
	if err := b.RollbackTo(kept); err != nil { // nothing to discard
		t.Fatal(err)
	}
	b.Set(k("b"), []byte("2"))
	b.Delete(k("a"))
	b.DeleteRange(k("a"), k("z"))
	if err := b.RollbackTo(kept); err != nil {
		t.Fatal(err)
	}
	if b.Mark() != kept {
		t.Fatalf("mark after rollback %+v, want %+v", b.Mark(), kept)
	}
	// The batch reads and iterates as it stood at the mark, and takes
	// more writes.
	if v, ok, err := b.Get(k("a")); err != nil || !ok || string(v) != "1" {
		t.Fatalf("a: %q %v %v", v, ok, err)
	}
	if _, ok, _ := b.Get(k("b")); ok {
		t.Fatal("b survived the rollback")
	}
	b.Set(k("c"), []byte("3"))
	it, err := b.NewIter(k("a"), k("z"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, string(it.Key()[1:])+"="+string(it.Value()))
	}
	it.Close()
	if strings.Join(got, ",") != "a=1,c=3" {
		t.Fatalf("batch holds %v", got)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"a": "1", "b": "", "c": "3"} {
		v, _, err := db.Get(k(key))
		if err != nil || string(v) != want {
			t.Fatalf("%s: %q %v, want %q", key, v, err, want)
		}
	}

	// Back to an empty batch.
	b = db.NewBatch()
	empty := b.Mark()
	b.Set(k("d"), []byte("4"))
	if err := b.RollbackTo(empty); err != nil {
		t.Fatal(err)
	}
	if !b.Empty() {
		t.Fatal("batch not empty after rolling back to its start")
	}
	b.Close()
}
