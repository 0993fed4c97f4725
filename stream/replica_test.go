package stream

import (
	"bytes"
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

// A replica's reader that found a stream missing (the metadata cache then
// holds it as absent) must see it once the primary's batch creating it is
// applied, and see it gone again after the batch deleting it.
func TestReplicaSeesStreamItReadAsMissing(t *testing.T) {
	primary, replicaDB, replica, batches := openPrimaryAndReplica(t)
	defer replicaDB.Close()
	replica.SetFollower(true)
	for i, step := range []struct {
		write func(tx *Tx) error
		want  int64
	}{
		{func(tx *Tx) error {
			_, _, err := tx.XAdd(0, []byte("s"), &XAddArgs{Auto: true, Fields: fv("f", "v")})
			return err
		}, 1},
		{func(tx *Tx) error { _, err := tx.Del(0, []byte("s")); return err }, 0},
	} {
		if n := xlen(t, replica, 0, "s"); n != 1-step.want {
			t.Fatalf("step %d: XLEN before the batch %d, want %d", i, n, 1-step.want)
		}
		mustUpdate(t, primary, step.write)
		if err := replica.ApplyReplicated((*batches)[len(*batches)-1], nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		if n := xlen(t, replica, 0, "s"); n != step.want {
			t.Fatalf("step %d: XLEN after the batch %d, want %d", i, n, step.want)
		}
	}
	if km, ok := replica.cache.get(0, []byte("s")); !ok || !km.absent {
		t.Errorf("the deleted stream's cache entry: %+v, %v; want absent", km, ok)
	}
}

// openPrimaryAndReplica opens a primary engine whose applied batches are
// collected in batches, in order, and an empty replica store and engine
// to apply them to (ApplyReplicated); the caller closes replicaDB.
func openPrimaryAndReplica(t *testing.T) (primary *Engine, replicaDB *storage.DB, replica *Engine, batches *[][]byte) {
	t.Helper()
	batches = new([][]byte)
	primary = openTestEngine(t, Options{OnApply: func(repr []byte, _ []Change) {
		*batches = append(*batches, bytes.Clone(repr))
	}})
	replicaDB, replica = openStoreEngine(t, storage.InMemory(), Options{})
	return primary, replicaDB, replica, batches
}
