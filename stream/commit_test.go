package stream

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/eddy-streams/eddy/storage"
)

// queued is the number of Updates waiting in the commit queue.
func queued(e *Engine) int {
	e.qmu.Lock()
	defer e.qmu.Unlock()
	return len(e.queue)
}

// commitTogether runs fns as one commit group, in order, and returns each
// one's result (a panic is returned as an error). An Update holds the
// leadership until all of them are queued behind it, and the next leader
// then takes them all at once.
func commitTogether(t *testing.T, e *Engine, fns ...func(*Tx) error) []error {
	t.Helper()
	held, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = e.Update(func(*Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	errs := make([]error, len(fns))
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("panic: %v", p)
				}
			}()
			errs[i] = e.Update(fn)
		}()
		for queued(e) < i+1 {
			runtime.Gosched()
		}
	}
	groups, grouped := e.groups.Load(), e.grouped.Load()
	close(release)
	wg.Wait()
	if g, n := e.groups.Load()-groups, e.grouped.Load()-grouped; g != 2 || n != uint64(len(fns))+1 {
		t.Fatalf("%d groups of %d Updates; want the holder alone, then the %d together", g, n, len(fns))
	}
	return errs
}

// changeLog records OnCommit calls.
type changeLog struct {
	mu    sync.Mutex
	calls [][]string
}

func (l *changeLog) onCommit(cs []Change) {
	var call []string
	for _, c := range cs {
		call = append(call, fmt.Sprintf("%d:%d:%s", c.Kind, c.DB, c.Key))
	}
	l.mu.Lock()
	l.calls = append(l.calls, call)
	l.mu.Unlock()
}

func (l *changeLog) take() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.calls
	l.calls = nil
	return out
}

var errBoom = errors.New("boom")

// A function that fails inside a group leaves nothing behind — data, key
// counts, cached metadata, versions, changes — while the functions before
// and after it, which see each other's writes, commit.
// CommitStats counts applied groups and the Updates that wrote in them:
// a failed Update, one that only read, and a group that wrote nothing
// count in neither.
func TestCommitStatsCountWrites(t *testing.T) {
	e := openTestEngine(t, Options{})
	xadd := func(tx *Tx) error {
		_, _, err := tx.XAdd(0, []byte("s"), &XAddArgs{Auto: true, Fields: fv("f", "v")})
		return err
	}
	read := func(tx *Tx) error {
		_, err := tx.XLen(0, []byte("s"))
		return err
	}
	failed := func(tx *Tx) error {
		if err := xadd(tx); err != nil {
			return err
		}
		return errBoom
	}
	// commitTogether's holder writes nothing: one group applied.
	commitTogether(t, e, xadd, failed, read, xadd)
	if got, want := e.CommitStats(), (CommitStats{Batches: 1, Writes: 2}); got != want {
		t.Fatalf("after 2 XADDs, a failure and a read in one group: %+v, want %+v", got, want)
	}
	if err := e.Update(read); err != nil {
		t.Fatal(err)
	}
	if err := e.Update(xadd); err != nil {
		t.Fatal(err)
	}
	if got, want := e.CommitStats(), (CommitStats{Batches: 2, Writes: 3}); got != want {
		t.Fatalf("then a read and an XADD alone: %+v, want %+v", got, want)
	}
}

// With appendfsync always an Update returns only once its writes are on
// disk: a crash right after (the store keeps only what was synced) loses
// none of them, from concurrent writers sharing groups.
func TestAlwaysUpdatesSurviveCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := storage.Options{Dir: "db", FS: fs, CacheSize: 8 << 20, Sync: storage.SyncAlways}
	db, e := openStoreEngine(t, opts, Options{})
	const writers, each = 20, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := xaddErr(e, "s", XAddArgs{Auto: true, Fields: fv("w", strconv.Itoa(w))}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{}) // only what was synced
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	opts.FS = crashed
	db, e = openStoreEngine(t, opts, Options{})
	defer db.Close()
	var n int64
	mustView(t, e, func(tx *Tx) error {
		var err error
		n, err = tx.XLen(0, []byte("s"))
		return err
	})
	if n != writers*each {
		t.Fatalf("after the crash the stream holds %d of the %d acknowledged entries", n, writers*each)
	}
}

// UpdateApplied returns once the writes are applied and told to
// OnCommit, without a sync even with appendfsync always: a crash then
// loses them, and the caller's SyncApplied makes them durable.
func TestUpdateAppliedThenSyncApplied(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := storage.Options{Dir: "db", FS: fs, CacheSize: 8 << 20, Sync: storage.SyncAlways}
	var log changeLog
	db, e := openStoreEngine(t, opts, Options{OnCommit: log.onCommit})
	syncs := db.Syncs().Count
	err := e.UpdateApplied(func(tx *Tx) error {
		_, _, err := tx.XAdd(0, []byte("s"), &XAddArgs{Auto: true, Fields: fv("f", "v")})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := db.Syncs().Count - syncs; n != 0 {
		t.Fatalf("UpdateApplied ran %d syncs", n)
	}
	if calls := log.take(); len(calls) != 1 {
		t.Fatalf("OnCommit calls %v, want one", calls)
	}
	unsynced := fs.CrashClone(vfs.CrashCloneCfg{})
	if err := db.SyncApplied(1); err != nil {
		t.Fatal(err)
	}
	synced := fs.CrashClone(vfs.CrashCloneCfg{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fs   vfs.FS
		want int64
	}{{unsynced, 0}, {synced, 1}} {
		opts.FS = c.fs
		db, e := openStoreEngine(t, opts, Options{})
		var n int64
		mustView(t, e, func(tx *Tx) error {
			var err error
			n, err = tx.XLen(0, []byte("s"))
			return err
		})
		db.Close()
		if n != c.want {
			t.Errorf("after a crash: XLEN %d, want %d", n, c.want)
		}
	}
}

func TestGroupFailureLeavesOnlyTheOthers(t *testing.T) {
	s, c, d, k := []byte("s"), []byte("c"), []byte("d"), []byte("k")
	fail := map[string]func(tx *Tx) error{
		"error before writing": func(tx *Tx) error { return errBoom },
		"error after writing": func(tx *Tx) error {
			if _, _, err := tx.XAdd(0, s, &XAddArgs{Auto: true, Fields: fv("f", "failed")}); err != nil {
				return err
			}
			if _, _, err := tx.XAdd(0, c, &XAddArgs{Auto: true, Fields: fv("f", "failed")}); err != nil {
				return err
			}
			if _, _, _, err := tx.Set(0, k, []byte("failed"), SetOptions{}); err != nil {
				return err
			}
			if _, err := tx.Del(0, []byte("old")); err != nil {
				return err
			}
			return errBoom
		},
		"flushdb then error": func(tx *Tx) error {
			if _, _, err := tx.XAdd(0, c, &XAddArgs{Auto: true, Fields: fv("f", "failed")}); err != nil {
				return err
			}
			if err := tx.FlushDB(0); err != nil {
				return err
			}
			if _, _, err := tx.XAdd(0, s, &XAddArgs{Auto: true, Fields: fv("f", "failed")}); err != nil {
				return err
			}
			return errBoom
		},
		"flushall then error": func(tx *Tx) error {
			if err := tx.FlushAll(); err != nil {
				return err
			}
			if _, _, err := tx.XAdd(1, c, &XAddArgs{Auto: true, Fields: fv("f", "failed")}); err != nil {
				return err
			}
			return errBoom
		},
		"panic after writing": func(tx *Tx) error {
			if _, _, err := tx.XAdd(0, c, &XAddArgs{Auto: true, Fields: fv("f", "failed")}); err != nil {
				return err
			}
			panic("boom")
		},
	}
	for name, failing := range fail {
		t.Run(name, func(t *testing.T) {
			var log changeLog
			e := openTestEngine(t, Options{OnCommit: log.onCommit})
			// Committed before the group: streams s (one entry) and x in
			// the cache, string "old", and a stream in db 1.
			if _, err := xadd(t, e, "s", XAddArgs{Auto: true, Fields: fv("f", "before")}); err != nil {
				t.Fatal(err)
			}
			mustUpdate(t, e, func(tx *Tx) error {
				if _, _, _, err := tx.Set(0, []byte("old"), []byte("v"), SetOptions{}); err != nil {
					return err
				}
				if _, _, err := tx.XAdd(0, []byte("x"), &XAddArgs{Auto: true, Fields: fv("f", "x")}); err != nil {
					return err
				}
				_, _, err := tx.XAdd(1, s, &XAddArgs{Auto: true, Fields: fv("f", "db1")})
				return err
			})
			log.take()
			// The next version allocated crosses the high-water mark, so
			// the failing function moves it, and must move it back.
			e.mu.Lock()
			e.highVersion = e.nextVersion
			v0, high0 := e.nextVersion, e.highVersion
			e.mu.Unlock()

			var seenLen int64
			var seenC bool
			errs := commitTogether(t, e,
				func(tx *Tx) error {
					if _, _, _, err := tx.Set(0, []byte("a"), []byte("first"), SetOptions{}); err != nil {
						return err
					}
					_, _, err := tx.XAdd(0, s, &XAddArgs{Auto: true, Fields: fv("f", "first")})
					return err
				},
				failing,
				func(tx *Tx) error {
					if _, _, err := tx.XAdd(0, s, &XAddArgs{Auto: true, Fields: fv("f", "last")}); err != nil {
						return err
					}
					if _, _, err := tx.XAdd(0, d, &XAddArgs{Auto: true, Fields: fv("f", "last")}); err != nil {
						return err
					}
					var err error
					if seenLen, err = tx.XLen(0, s); err != nil {
						return err
					}
					seenC, err = tx.Exists(0, c)
					return err
				},
			)
			if errs[0] != nil || errs[2] != nil || errs[1] == nil {
				t.Fatalf("results %v; want only the second to fail", errs)
			}
			if seenLen != 3 || seenC {
				t.Fatalf("the last function saw XLEN %d and c existing %v; want 3 and false", seenLen, seenC)
			}

			// The metadata cache holds what storage holds; checked before
			// any read can fill it.
			checkCacheMatchesStore(t, e, 0, s)
			checkCacheMatchesStore(t, e, 0, d)
			checkCacheMatchesStore(t, e, 0, []byte("x")) // no flush was published
			checkCacheMatchesStore(t, e, 1, s)
			if km, ok := e.cache.get(0, c); ok && !km.absent {
				t.Error("the failed stream is in the cache")
			}

			// Data.
			mustView(t, e, func(tx *Tx) error {
				es, err := tx.XRange(0, s, ID{}, MaxID, -1, false)
				if err != nil {
					return err
				}
				var vals []string
				for i, en := range es {
					vals = append(vals, string(en.Fields[1]))
					if i > 0 && !es[i-1].ID.Less(en.ID) {
						t.Errorf("IDs out of order: %v", es)
					}
				}
				if want := []string{"before", "first", "last"}; !slices.Equal(vals, want) {
					t.Errorf("s holds %v, want %v", vals, want)
				}
				for key, want := range map[string]bool{"c": false, "k": false, "a": true, "d": true, "old": true} {
					if ok, err := tx.Exists(0, []byte(key)); err != nil || ok != want {
						t.Errorf("exists %s: %v %v, want %v", key, ok, err, want)
					}
				}
				if ok, _ := tx.Exists(1, s); !ok {
					t.Error("db 1 lost its stream")
				}
				if ok, _ := tx.Exists(1, c); ok {
					t.Error("db 1 holds the failed stream")
				}
				// Key counts, in memory and as stored.
				for db, want := range map[int]int64{0: 5, 1: 1} {
					if n, err := tx.DBSize(db); err != nil || n != want {
						t.Errorf("DBSIZE %d: %d %v, want %d", db, n, err, want)
					}
					v, _, err := e.db.Get(storage.KeyCountsKey(db))
					if err != nil {
						return err
					}
					if keys, _, err := storage.DecodeKeyCounts(v); err != nil || int64(keys) != want {
						t.Errorf("stored count of db %d: %d %v, want %d", db, keys, err, want)
					}
				}
				return nil
			})

			// Versions: d got the version the failed function had taken,
			// and the high-water mark stored covers it.
			mustView(t, e, func(tx *Tx) error {
				m, ok, err := tx.lookup(0, d)
				if err != nil || !ok {
					return fmt.Errorf("lookup d: %v %v", ok, err)
				}
				if m.Version != v0 {
					t.Errorf("d has version %d, want %d (the failed function's is reused)", m.Version, v0)
				}
				return nil
			})
			high, err := e.db.HighVersion()
			if err != nil {
				t.Fatal(err)
			}
			e.mu.Lock()
			if e.nextVersion != v0+1 || e.highVersion == high0 || high != e.highVersion {
				t.Errorf("next %d high %d stored %d; want next %d and the stored mark moved past %d", e.nextVersion, e.highVersion, high, v0+1, high0)
			}
			e.mu.Unlock()

			// OnCommit: the first and the last function's changes, in order.
			want := [][]string{{"0:0:a", "1:0:s"}, {"1:0:s", "1:0:d"}}
			if got := log.take(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("OnCommit calls %v, want %v", got, want)
			}
		})
	}
}

// checkCacheMatchesStore fails unless key's cached metadata equals its
// record in storage.
func checkCacheMatchesStore(t *testing.T, e *Engine, db int, key []byte) {
	t.Helper()
	km, ok := e.cache.get(db, key)
	if !ok {
		t.Errorf("%s not cached", key)
		return
	}
	v, ok, err := e.db.Get(storage.AppendMetaKey(nil, db, key))
	if err != nil || !ok {
		t.Fatalf("%s not stored: %v", key, err)
	}
	m, err := storage.DecodeMeta(v)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := decodeStreamMeta(m.Body)
	if err != nil {
		t.Fatal(err)
	}
	if km.sm != sm || km.meta.Version != m.Version {
		t.Errorf("%s: cached %+v v%d, stored %+v v%d", key, km.sm, km.meta.Version, sm, m.Version)
	}
}

func mustUpdate(t *testing.T, e *Engine, fn func(tx *Tx) error) {
	t.Helper()
	if err := e.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func mustView(t *testing.T, e *Engine, fn func(tx *Tx) error) {
	t.Helper()
	if err := e.View(fn); err != nil {
		t.Fatal(err)
	}
}

// Rolling back one command of a function keeps the commands before and
// after it, as a pipeline run in one Update needs.
func TestSavepointRollsBackOneCommand(t *testing.T) {
	var log changeLog
	e := openTestEngine(t, Options{OnCommit: log.onCommit})
	mustUpdate(t, e, func(tx *Tx) error {
		if _, _, err := tx.XAdd(0, []byte("a"), &XAddArgs{Auto: true, Fields: fv("f", "1")}); err != nil {
			return err
		}
		sp := tx.Savepoint()
		if _, _, err := tx.XAdd(0, []byte("a"), &XAddArgs{Auto: true, Fields: fv("f", "undone")}); err != nil {
			return err
		}
		if _, _, err := tx.XAdd(0, []byte("b"), &XAddArgs{Auto: true, Fields: fv("f", "undone")}); err != nil {
			return err
		}
		if err := tx.RollbackTo(sp); err != nil {
			return err
		}
		_, _, err := tx.XAdd(0, []byte("c"), &XAddArgs{Auto: true, Fields: fv("f", "3")})
		return err
	})
	mustView(t, e, func(tx *Tx) error {
		if n, _ := tx.XLen(0, []byte("a")); n != 1 {
			t.Errorf("XLEN a = %d, want 1", n)
		}
		if ok, _ := tx.Exists(0, []byte("b")); ok {
			t.Error("b survived its rollback")
		}
		if n, _ := tx.DBSize(0); n != 2 {
			t.Errorf("DBSIZE %d, want 2", n)
		}
		if err := tx.RollbackTo(Savepoint{}); !errors.Is(err, ErrReadOnlyTx) {
			t.Errorf("RollbackTo in a View: %v", err)
		}
		return nil
	})
	checkCacheMatchesStore(t, e, 0, []byte("a"))
	if got := fmt.Sprint(log.take()); got != "[[1:0:a 1:0:c]]" {
		t.Errorf("OnCommit calls %s", got)
	}
}

// Fifty clients appending to one stream get strictly increasing IDs, each
// its own, and every entry is kept.
func TestConcurrentXAddOneStream(t *testing.T) {
	db, err := storage.Open(storage.Options{Dir: t.TempDir(), Sync: storage.SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e, err := Open(db, Options{Limits: func() NodeLimits { return NodeLimits{MaxBytes: 4096, MaxEntries: 7} }})
	if err != nil {
		t.Fatal(err)
	}
	const clients, each = 50, 40
	ids := make([][]ID, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				a := XAddArgs{Auto: true, Fields: fv("c", fmt.Sprint(c), "i", fmt.Sprint(i))}
				id, err := xaddErr(e, "s", a)
				if err != nil {
					t.Error(err)
					return
				}
				ids[c] = append(ids[c], id)
			}
		}()
	}
	wg.Wait()
	var all []ID
	for c, mine := range ids {
		for i := 1; i < len(mine); i++ {
			if !mine[i-1].Less(mine[i]) {
				t.Fatalf("client %d got %v then %v", c, mine[i-1], mine[i])
			}
		}
		all = append(all, mine...)
	}
	slices.SortFunc(all, ID.Compare)
	mustView(t, e, func(tx *Tx) error {
		es, err := tx.XRange(0, []byte("s"), ID{}, MaxID, -1, false)
		if err != nil {
			return err
		}
		if len(es) != clients*each || len(all) != clients*each {
			t.Fatalf("%d entries stored, %d IDs returned; want %d", len(es), len(all), clients*each)
		}
		next := make([]int, clients)
		for i, en := range es {
			if en.ID != all[i] {
				t.Fatalf("entry %d is %v, want %v: IDs repeated or lost", i, en.ID, all[i])
			}
			// Each client's entries are stored in the order it added them.
			var c, n int
			fmt.Sscan(string(en.Fields[1]), &c)
			fmt.Sscan(string(en.Fields[3]), &n)
			if n != next[c] {
				t.Fatalf("client %d: entry %d stored where %d was due", c, n, next[c])
			}
			next[c]++
		}
		if n, _ := tx.XLen(0, []byte("s")); n != clients*each {
			t.Fatalf("XLEN %d", n)
		}
		return nil
	})
	checkCacheMatchesStore(t, e, 0, []byte("s"))
}

func xaddErr(e *Engine, key string, a XAddArgs) (ID, error) {
	var id ID
	err := e.Update(func(tx *Tx) error {
		var err error
		id, _, err = tx.XAdd(0, []byte(key), &a)
		return err
	})
	return id, err
}

// Readers never see part of a group: every Update appends to two
// streams, and a View always finds them the same length.
func TestViewSeesGroupsWhole(t *testing.T) {
	e := openTestEngine(t, Options{})
	stop := make(chan struct{})
	var writers, readers sync.WaitGroup
	for range 20 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for range 50 {
				err := e.Update(func(tx *Tx) error {
					for _, k := range []string{"a", "b"} {
						if _, _, err := tx.XAdd(0, []byte(k), &XAddArgs{Auto: true, Fields: fv("f", "v")}); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = e.View(func(tx *Tx) error {
					a, _ := tx.XLen(0, []byte("a"))
					b, _ := tx.XLen(0, []byte("b"))
					if a != b {
						t.Errorf("XLEN a %d, b %d: a group seen in part", a, b)
					}
					return nil
				})
			}
		}()
	}
	writers.Wait()
	close(stop)
	readers.Wait()
}
