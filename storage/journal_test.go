package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// journalOp is one write of a journal test batch: a Set, or a removal
// (Delete, or SingleDelete if single).
type journalOp struct {
	key, value string
	remove     bool
	single     bool
}

// journalOps are batch i's writes: "last" and one key of fifty set,
// another deleted, and every tenth batch a key set once and removed with
// SingleDelete five batches later, which Pebble allows only if no batch
// is applied twice; and a pad, so that small segments fill.
func journalOps(i int) []journalOp {
	ops := []journalOp{
		{key: "last", value: strconv.Itoa(i)},
		{key: fmt.Sprintf("k%02d", i%50), value: strconv.Itoa(i)},
		{key: fmt.Sprintf("k%02d", (i+25)%50), remove: true},
	}
	if i%10 == 0 {
		ops = append(ops, journalOp{key: "once" + strconv.Itoa(i), value: "x"})
	}
	if i%10 == 5 && i > 5 {
		ops = append(ops, journalOp{key: "once" + strconv.Itoa(i-5), remove: true, single: true})
	}
	return append(ops, journalOp{key: "pad", value: string(make([]byte, 200))})
}

// journalBatch applies batch i (journalOps) without syncing.
func journalBatch(t *testing.T, db *DB, i int) {
	t.Helper()
	b := db.NewBatch()
	for _, op := range journalOps(i) {
		var err error
		switch {
		case op.single:
			err = b.SingleDelete([]byte(op.key))
		case op.remove:
			err = b.Delete([]byte(op.key))
		default:
			err = b.Set([]byte(op.key), []byte(op.value))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Apply(); err != nil {
		t.Fatal(err)
	}
}

// journalSyncedBatch applies batch i and syncs it.
func journalSyncedBatch(t *testing.T, db *DB, i int) {
	t.Helper()
	journalBatch(t, db, i)
	if err := db.SyncApplied(1); err != nil {
		t.Fatal(err)
	}
}

// checkJournalModel fails unless db holds exactly what batches 1..n
// write, over the keys they write.
func checkJournalModel(t *testing.T, db *DB, n int) {
	t.Helper()
	m := map[string]string{}
	for i := 1; i <= n; i++ {
		for _, op := range journalOps(i) {
			if op.remove {
				delete(m, op.key)
			} else {
				m[op.key] = op.value
			}
		}
	}
	keys := []string{"last", "pad"}
	for i := range 50 {
		keys = append(keys, fmt.Sprintf("k%02d", i))
	}
	for i := 0; i <= n+10; i += 10 {
		keys = append(keys, "once"+strconv.Itoa(i))
	}
	for _, k := range keys {
		got, ok, err := db.Get([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		want, wok := m[k]
		if ok != wok || string(got) != want {
			t.Errorf("after %d batches: %s = %q (present %v), want %q (present %v)", n, k, got, ok, want, wok)
		}
	}
}

func lastBatch(t *testing.T, db *DB) int {
	t.Helper()
	v, ok, err := db.Get([]byte("last"))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func journalOpts(fs vfs.FS) Options {
	return Options{Dir: "db", FS: fs, CacheSize: 8 << 20, Sync: SyncAlways, journalSegmentSize: 4 << 10}
}

// A crash keeps a prefix of the batches, at least every one synced, each
// applied once: the flushed ones by Pebble, the rest replayed from the
// journal; and a recovered store recovers again. Crashes keep random
// parts of what was not synced, with flushes (and so released segments)
// at random points.
func TestJournalCrashKeepsSyncedPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var prepared, recycled int64
	defer func() {
		// Replay met segments written over a spare's zeros and over a
		// recycled segment's old batches.
		if prepared == 0 || recycled == 0 {
			t.Errorf("%d spares prepared, %d recycled; want both", prepared, recycled)
		}
	}()
	for round := range 30 {
		fs := vfs.NewCrashableMem()
		opts := journalOpts(fs)
		n, synced, flushed := 0, 0, 0
		for life := range 3 {
			db, err := Open(opts)
			if err != nil {
				t.Fatalf("round %d, life %d: %v", round, life, err)
			}
			got := lastBatch(t, db)
			if got < synced || got > n {
				t.Fatalf("round %d, life %d: the store holds %d batches; %d were synced, %d applied", round, life, got, synced, n)
			}
			if want := got - flushed; db.replayed != want {
				t.Errorf("round %d, life %d: %d batches replayed, want %d (%d held, %d flushed)", round, life, db.replayed, want, got, flushed)
			}
			checkJournalModel(t, db, got)
			n, flushed, synced = got, got, got // Open flushed what it replayed
			for range 20 + rng.IntN(80) {
				n++
				journalBatch(t, db, n)
				switch r := rng.IntN(20); {
				case r < 3:
					if err := db.SyncApplied(1); err != nil {
						t.Fatal(err)
					}
					synced = n
				case r == 3:
					if err := db.pdb.Flush(); err != nil {
						t.Fatal(err)
					}
					flushed = n
				}
			}
			crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rng})
			prepared += db.journal.prepared.Load()
			recycled += db.journal.recycled.Load()
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			fs = crashed
			opts.FS = fs
		}
	}
}

// Full segments are deleted once a flush holds their batches, and
// Close leaves none behind.
func TestJournalSegmentsReleased(t *testing.T) {
	fs := vfs.NewMem()
	opts := journalOpts(fs)
	db, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 200; i++ {
		journalSyncedBatch(t, db, i)
	}
	segments := func() int {
		t.Helper()
		nums, err := db.journal.segmentNums()
		if err != nil {
			t.Fatal(err)
		}
		return len(nums)
	}
	if n := segments(); n < 5 {
		t.Fatalf("%d segments after 200 batches of 4 KB segments", n)
	}
	if db.journal.size.Load() < 200*200 {
		t.Errorf("journal size %d, want at least the 200 batches' pads", db.journal.size.Load())
	}
	if err := db.pdb.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return segments() == 1 })
	// One segment written, and one kept as the spare.
	if size, most := db.journal.size.Load(), int64(2*(4<<10+512)+1024); size > most {
		t.Errorf("journal size %d after the release, more than %d", size, most)
	}
	if db.journal.prepared.Load() == 0 {
		t.Error("no spare prepared")
	}
	// More segments, taking the spare, then released with no spare
	// ready: one of them is kept as the spare.
	for i := 201; i <= 260; i++ {
		journalSyncedBatch(t, db, i)
	}
	waitFor(t, func() bool { return !db.journal.spareIs(sparePreparing) })
	if db.journal.spareIs(spareReady) {
		// Let the next rotation take it.
		for i := 261; db.journal.spareIs(spareReady); i++ {
			journalSyncedBatch(t, db, i)
		}
	}
	if err := db.pdb.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return db.journal.recycled.Load() > 0 })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	nums, err := newJournal(fs, "db", false, 0, nil).segmentNums()
	if err != nil || len(nums) != 0 {
		t.Errorf("after Close: segments %v, %v", nums, err)
	}
	db, err = Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.replayed != 0 {
		t.Errorf("%d batches replayed after a clean close", db.replayed)
	}
	checkJournalModel(t, db, lastBatch(t, db))
}

// With everysec and no, what is applied reaches the journal's file
// within the everysec loop's period: a process that is killed then (the
// operating system keeps what was written) loses none of it.
func TestJournalWrittenWithoutSync(t *testing.T) {
	for _, mode := range []SyncMode{SyncEverySec, SyncNo} {
		fs := vfs.NewCrashableMem()
		opts := journalOpts(fs)
		opts.journalSegmentSize = 0
		opts.Sync = mode
		opts.syncEvery = 10 * time.Millisecond
		db, err := Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 10; i++ {
			journalBatch(t, db, i)
		}
		db.NoteApplied() // as the event loop does after applying
		waitFor(t, func() bool {
			db.journal.bufMu.Lock()
			defer db.journal.bufMu.Unlock()
			return len(db.journal.buf) == 0
		})
		db.journal.fileMu.Lock() // the write in flight, if any, is done
		killed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rand.New(rand.NewPCG(1, 2))})
		db.journal.fileMu.Unlock()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		opts.FS = killed
		db, err = Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := lastBatch(t, db); got != 10 {
			t.Errorf("mode %v: %d of 10 batches after a kill", mode, got)
		}
		checkJournalModel(t, db, 10)
		db.Close()
	}
}

// A damaged journal is refused, except for the tail of its last segment,
// where a crash leaves what it did not sync.
func TestJournalDamage(t *testing.T) {
	// build returns a crashed store of 60 or so synced batches in
	// several segments, the last not empty, nothing flushed; and how
	// many batches it holds.
	build := func() (*vfs.MemFS, int) {
		fs := vfs.NewCrashableMem()
		db, err := Open(journalOpts(fs))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for n < 60 || db.journal.seg.size == 0 {
			n++
			journalSyncedBatch(t, db, n)
		}
		crashed := fs.CrashClone(vfs.CrashCloneCfg{})
		db.Close()
		return crashed, n
	}
	segs := func(fs vfs.FS) []uint64 {
		nums, err := newJournal(fs, "db", false, 0, nil).segmentNums()
		if err != nil || len(nums) < 3 {
			t.Fatalf("segments %v, %v", nums, err)
		}
		return nums
	}
	// rewrite replaces segment num's bytes with edit's result.
	rewrite := func(fs vfs.FS, num uint64, edit func([]byte) []byte) {
		j := newJournal(fs, "db", false, 0, nil)
		data, err := j.read(num)
		if err != nil {
			t.Fatal(err)
		}
		data = edit(data)
		f, err := fs.Create(j.path(num), vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	for _, c := range []struct {
		name string
		last bool                // damage the last segment, else the first
		edit func([]byte) []byte // the damage
		lost int                 // batches lost; -1 for ErrJournalCorrupt
	}{
		{"intact", true, func(b []byte) []byte { return b }, 0},
		{"torn tail", true, func(b []byte) []byte { return b[:framesEnd(b)-3] }, 1},
		{"garbage tail", true, func(b []byte) []byte {
			return append(b[:framesEnd(b)], 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)
		}, 0},
		{"flipped bit at the tail", true, func(b []byte) []byte { b[framesEnd(b)-1] ^= 1; return b }, 1},
		{"flipped bit in a full segment's end frame", false, func(b []byte) []byte { b[framesEnd(b)-1] ^= 1; return b }, -1},
		{"flipped bit in a full segment's batch", false, func(b []byte) []byte { b[framesEnd(b)-frameHeaderLen-1] ^= 1; return b }, -1},
		{"full segment cut short", false, func(b []byte) []byte { return b[:framesEnd(b)-1] }, -1},
		{"full segment's end frame gone", false, func(b []byte) []byte { return b[:framesEnd(b)-frameHeaderLen] }, -1},
		{"segment missing", false, nil, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs, n := build()
			nums := segs(fs)
			num := nums[0]
			if c.last {
				num = nums[len(nums)-1]
			}
			if c.edit == nil {
				if err := fs.Remove(newJournal(fs, "db", false, 0, nil).path(num)); err != nil {
					t.Fatal(err)
				}
			} else {
				rewrite(fs, num, c.edit)
			}
			db, err := Open(journalOpts(fs))
			if c.lost < 0 {
				if !errors.Is(err, ErrJournalCorrupt) {
					t.Errorf("Open: %v, want ErrJournalCorrupt", err)
				}
				if err == nil {
					db.Close()
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if got, want := lastBatch(t, db), n-c.lost; got != want {
				t.Errorf("%d batches recovered, want %d", got, want)
			}
			checkJournalModel(t, db, lastBatch(t, db))
		})
	}
}

// waitFor waits until cond holds, failing after ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

// A store that a binary with Pebble's WAL left after a crash (its last
// writes only in that log) opens with them: Pebble replays its log at
// Open whether or not it writes one.
func TestJournalOpensStoreWithPebbleLog(t *testing.T) {
	fs := vfs.NewCrashableMem()
	opts := journalOpts(fs)
	opts.Logger = slog.New(slog.DiscardHandler)
	cache := pebble.NewCache(8 << 20)
	defer cache.Unref()
	po := pebbleOptions(opts, cache, newWriteStalls(), &appendTargets{})
	pdb, err := pebble.Open(opts.Dir, po)
	if err != nil {
		t.Fatal(err)
	}
	if err := pdb.Set(storeKey(recordFormat), []byte(strconv.Itoa(FormatVersion)), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := pdb.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := pdb.Set([]byte("k"), []byte("v"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	pdb.Close()
	opts.FS = crashed
	db, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, ok, err := db.Get([]byte("k")); err != nil || !ok || string(v) != "v" {
		t.Errorf("k = %q, %v, %v after the crash; want v", v, ok, err)
	}
}

// failingFS fails the journal's syncs while fail is set.
type failingFS struct {
	vfs.FS
	fail *atomic.Bool
}

func (fs failingFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	if err != nil || !strings.HasSuffix(name, journalSuffix) {
		return f, err
	}
	return failingFile{File: f, fail: fs.fail}, nil
}

type failingFile struct {
	vfs.File
	fail *atomic.Bool
}

var errInjected = errors.New("injected sync failure")

func (f failingFile) SyncData() error {
	if f.fail.Load() {
		return errInjected
	}
	return f.File.SyncData()
}

// After a failed sync the store takes no more writes: the sync's waiter
// and every later apply get the error. What was synced before survives.
func TestJournalFailureStopsWrites(t *testing.T) {
	mem := vfs.NewMem()
	var fail atomic.Bool
	opts := journalOpts(failingFS{FS: mem, fail: &fail})
	db, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	journalSyncedBatch(t, db, 1)
	fail.Store(true)
	journalBatch(t, db, 2)
	if err := db.SyncApplied(1); !errors.Is(err, errInjected) {
		t.Fatalf("SyncApplied after a failed sync: %v", err)
	}
	fail.Store(false)
	b := db.NewBatch()
	if err := b.Set([]byte("after"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); !errors.Is(err, errInjected) {
		t.Errorf("Commit after a failed sync: %v, want the failure", err)
	}
	if err := db.SyncApplied(1); !errors.Is(err, errInjected) {
		t.Errorf("a later sync: %v, want the failure", err)
	}
	if err := db.Close(); !errors.Is(err, errInjected) {
		t.Errorf("Close: %v, want the failure", err)
	}
	opts.FS = mem
	db, err = Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := lastBatch(t, db); got < 1 {
		t.Errorf("%d batches after the failure, want the synced one at least", got)
	}
	if _, ok, _ := db.Get([]byte("after")); ok {
		t.Error("a batch committed after the failure is in the store")
	}
}

// framesEnd is where a segment's frames end (after its end frame, if it
// has one), before what the file held before them.
func framesEnd(b []byte) int {
	off := 0
	var prev uint64
	for {
		index, _, rest, end, ok := parseFrame(b[off:])
		if !ok || prev != 0 && index <= prev && !end {
			return off
		}
		off = len(b) - len(rest)
		if end {
			return off
		}
		prev = index
	}
}
