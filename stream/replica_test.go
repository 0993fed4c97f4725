package stream

import (
	"context"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

// TestFullSyncPausesGC checks that the store's garbage collector, which
// writes without Engine.mu, drops nothing while a full sync loads, and
// collects the loaded garbage once the load ends (Finish or Abort).
func TestFullSyncPausesGC(t *testing.T) {
	for _, finish := range []bool{true, false} {
		name := map[bool]string{true: "finish", false: "abort"}[finish]
		t.Run(name, func(t *testing.T) {
			e := openTestEngine(t, Options{})
			data := storage.AppendEntryKey(nil, 0, []byte("s"), 7, 1, 1)
			fs, err := e.BeginFullSync()
			if err != nil {
				t.Fatal(err)
			}
			// A primary's snapshot may hold a garbage record and its range.
			if err := fs.Put(storage.AppendGarbageKey(nil, 7), storage.EncodeGarbageValue(0, []byte("s"))); err != nil {
				t.Fatal(err)
			}
			if err := fs.Put(data, []byte("x")); err != nil {
				t.Fatal(err)
			}
			// Put commits at fullSyncBatchBytes; force the records in.
			if err := fs.b.Commit(); err != nil {
				t.Fatal(err)
			}
			fs.b = e.db.NewBatch()
			present := func() bool {
				t.Helper()
				_, ok, err := e.db.Get(data)
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
			// Compact runs a collection pass first, synchronously.
			if err := e.db.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !present() {
				t.Fatal("the collector dropped data during a full sync")
			}
			if finish {
				err = fs.Finish([]byte("id\x00\x00\x00\x00\x00\x00\x00\x00"))
			} else {
				err = fs.Abort()
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := e.db.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
			if present() {
				t.Fatal("the collector stayed paused after the full sync")
			}
		})
	}
}
