package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// FormatVersion is the version of the key and value layouts this binary
// reads and writes. It is recorded in the store when the store is created.
const FormatVersion = 4 // 2: entry values carry their sequence; field sets, seq and subject indexes. 3: metadata records after their key's data. 4: entry records of several entries (values.go)

// formatUpgradable is the older format this binary opens as it is and
// records as FormatVersion: format 4 only adds a value layout, which a
// format-3 store does not hold. Once recorded as 4, a store is refused
// by binaries that know only 3, which could not read its records.
const formatUpgradable = 3

// SyncMode is the durability policy, named after Redis's appendfsync.
type SyncMode int

// Sync modes.
const (
	// SyncEverySec syncs the journal at least once a second.
	SyncEverySec SyncMode = iota
	// SyncAlways syncs before Commit returns; concurrent commits share a sync.
	SyncAlways
	// SyncNo leaves syncing to the operating system.
	SyncNo
)

// syncModeNames are the modes' appendfsync values, indexed by SyncMode.
var syncModeNames = [...]string{SyncEverySec: "everysec", SyncAlways: "always", SyncNo: "no"}

// SyncModeNames lists the appendfsync values ParseSyncMode accepts, the
// default first.
func SyncModeNames() []string { return append([]string(nil), syncModeNames[:]...) }

// ParseSyncMode parses an appendfsync value.
func ParseSyncMode(s string) (SyncMode, error) {
	for m, name := range syncModeNames {
		if s == name {
			return SyncMode(m), nil
		}
	}
	return 0, fmt.Errorf("storage: unknown sync mode %q", s)
}

// ErrUnknownFormat is returned by Open for a store written by a newer or
// foreign binary.
var ErrUnknownFormat = errors.New("storage: unknown store format")

// Options configure Open.
type Options struct {
	Dir string
	// CacheSize is the bytes of Pebble's cache. Pebble counts the
	// memtables in it (up to 2 of 8 MB), so the blocks get what is left,
	// which at 16 MB or less can be nothing.
	CacheSize int64
	Sync      SyncMode
	// FS replaces the real file system (tests use vfs.NewMem()).
	FS     vfs.FS
	Logger *slog.Logger

	// tune changes the Pebble options after Eddy's own; the tuning
	// benchmarks set it (tune_export_test.go) to compare settings.
	tune func(*pebble.Options)
	// syncEvery is the everysec loop's period; 0 is a second. Tests
	// lengthen it to see the syncs ahead alone.
	syncEvery time.Duration
	// slotWanted replaces goroutinesWaiting as DB.slotWanted; tests
	// decide with it whether a log sync may be raw.
	slotWanted func() bool
	// journalSegmentSize replaces journalSegmentSize; tests make it
	// small to see segments filled and released.
	journalSegmentSize int64
}

// DB is an open store.
type DB struct {
	pdb     *pebble.DB
	cache   interface{ Unref() }
	logger  *slog.Logger
	syncer  syncer
	journal *journal // the write-ahead log (journal.go)

	// mode is the SyncMode, read by every write and by the event loop
	// for every reply.
	mode atomic.Uint32

	dirty chan struct{} // signals the everysec loop that writes are unsynced
	// unsynced counts the bytes applied since the everysec loop last
	// started a sync; past walSyncAhead it syncs at once (soon).
	unsynced atomic.Int64
	soon     chan struct{}
	gcKick   chan struct{}
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	// gcMu is held through a collection pass, so that PauseGC can wait
	// for one in flight.
	gcMu     sync.Mutex
	gcPaused int // guarded by gcMu: open PauseGC calls

	stalls  *writeStalls   // Pebble's write stops, for WriteStalls
	damage  damage         // damaged data the reads met (damage.go)
	targets *appendTargets // streams whose entries end a table (targets.go)

	// rawLogSyncs counts the journal syncs run as raw system calls
	// (logFile, while the mode is SyncAlways).
	rawLogSyncs atomic.Uint64
	// slotWanted reports whether goroutines wait for a scheduler slot,
	// when a log sync would keep its own (logfs_linux.go); nil is never.
	slotWanted func() bool

	// replayed is how many batches Open replayed from the journal.
	replayed int

	// applied counts the batches applied (apply): an IterCache's
	// iterator shows the committed state while it has not moved.
	applied atomic.Uint64
}

// InMemory returns Options for a store kept in memory, for tests. Its
// cache holds no blocks (see CacheSize): reads that need speed set more.
func InMemory() Options {
	return Options{Dir: "mem", FS: vfs.NewMem(), CacheSize: 8 << 20}
}

// Open opens (creating if needed) the store in opts.Dir.
func Open(opts Options) (*DB, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.FS == nil {
		opts.FS = vfs.Default
		if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
			return nil, err
		}
	}
	if err := checkFormat(opts); err != nil {
		return nil, err
	}
	cache := pebble.NewCache(max(opts.CacheSize, 1<<20))
	stalls := newWriteStalls()
	targets := &appendTargets{}
	db := &DB{
		cache:   cache,
		logger:  opts.Logger,
		dirty:   make(chan struct{}, 1),
		soon:    make(chan struct{}, 1),
		gcKick:  make(chan struct{}, 1),
		stalls:  stalls,
		targets: targets,
		damage:  damage{logger: opts.Logger},
	}
	db.mode.Store(uint32(opts.Sync))
	// Only on the real file system are the journal's calls raw: one a
	// test puts in its place (a gate on syncs, a crashable one) sees
	// every call.
	raw := opts.FS == vfs.Default
	if raw {
		db.slotWanted = goroutinesWaiting
		if opts.slotWanted != nil {
			db.slotWanted = opts.slotWanted
		}
	}
	db.journal = newJournal(opts.FS, opts.Dir, raw, opts.journalSegmentSize, db)
	po := pebbleOptions(opts, cache, stalls, targets)
	// The journal is the write-ahead log (journal.go). A store that a
	// binary with Pebble's WAL left unflushed is still recovered: Pebble
	// replays any log it finds at Open and flushes it.
	po.DisableWAL = true
	po.EventListener.FlushEnd = db.journal.noteFlushed
	po.EventListener.DataCorruption = db.damage.note
	pdb, err := pebble.Open(opts.Dir, po)
	if err != nil {
		cache.Unref()
		return nil, err
	}
	db.pdb = pdb
	fail := func(err error) (*DB, error) {
		if db.journal.seg != nil {
			db.journal.close(false)
		}
		db.pdb.Close()
		cache.Unref()
		return nil, err
	}
	db.replayed, err = db.journal.recover(pdb)
	if err != nil {
		return fail(err)
	}
	if db.replayed > 0 {
		db.logger.Info("journal replayed", "batches", db.replayed)
	}
	db.syncer.sync = func() error { return db.journal.write(true) }
	db.syncer.applied = &db.applied
	if err := db.initFormat(); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	db.cancel = cancel
	db.wg.Add(3)
	go db.everySecLoop(ctx, opts.syncEvery)
	go db.gcLoop(ctx)
	go func() {
		defer db.wg.Done()
		db.journal.run(ctx.Done())
	}()
	db.KickGC()
	return db, nil
}

// pebbleOptions returns the Pebble options of a store, reporting write
// stops to stalls and ending tables around targets; opts.tune, set only
// by the tuning benchmarks and tests, may change them.
//
// The settings are for Eddy's workload: entries appended at the end of
// streams, read back in ranges (XRANGE, XREAD, XREADGROUP), metadata read
// by point Gets (mostly answered by the engine's metadata cache). Each
// figure below is from storage/tune_bench_test.go (1M XADD-shaped entries
// of 3 fields, ~60 bytes, loaded through the engine, fully compacted;
// XRANGE COUNT 10 from random old IDs with a cold block cache scaled to
// the data as 64 MB is to 10M entries; CGO_ENABLED=0 as the binary is
// built; 2 shared CPUs, medians of 6 runs). Redis 7.0's dump.rdb of the
// same entries takes 25.5 bytes per entry.
func pebbleOptions(opts Options, cache *pebble.Cache, stalls *writeStalls, targets *appendTargets) *pebble.Options {
	po := &pebble.Options{
		FS:                 opts.FS,
		Cache:              cache,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             quietLogger{opts.Logger},
		EventListener:      storeEvents(opts.Logger, stalls),
	}
	setMemTables(po)
	setCompactions(po)
	for i := range po.Levels {
		po.Levels[i] = levelOptions(i)
	}
	// Tables end where an append target's entries do (targets.go).
	po.Experimental.SpanPolicyFunc = targets.spanPolicy
	// Compactions pause while goroutines wait for a CPU (pacer.go).
	po.Experimental.CompactionScheduler = newCompactionPacer()
	if opts.tune != nil {
		opts.tune(po)
	}
	return po
}

// setMemTables sets the size and number of po's memtables.
func setMemTables(po *pebble.Options) {
	// 8 MB memtables, at most 2 before writes stall. Every flush of
	// appends to a stream is merged with the table at the stream's
	// tail (its metadata record and nodes sort after the entries;
	// measured before the span policy of targets.go kept the new
	// entries out of that merge), so fewer, larger flushes rewrite
	// less: with 8 MB, 500k XADDs with -P 16 took 2.1-2.2 s of
	// server CPU against 2.5-2.8 s with 4 MB, and two servers run
	// side by side, rounds alternating, did 206k against 159k
	// XADD/s (medians of 8 rounds of 100k; 145k against 131k with
	// appendfsync always).
	// Unpipelined XADD, consumer groups and XRANGE under writes
	// did not move beyond the noise. Memtables count fully toward
	// RSS, whose target is 0.15x Redis's (588 MB for bigbench's 10M
	// entries, so 88 MB): 73 MB with 8 MB memtables, 55 MB with 4,
	// 110 MB with 16 (over). A larger memtable is more journal to
	// replay after a crash; Close flushes it, so a clean restart
	// replays nothing.
	po.MemTableSize = 8 << 20
	po.MemTableStopWritesThreshold = 2
}

// setCompactions sets when and how far po's compactions run: L0's
// thresholds, the base level's size, how many run at once and the size
// of the tables they write.
func setCompactions(po *pebble.Options) {
	// Pebble's defaults: L0 thresholds 2/24 and 8/32 loaded at 106k
	// and 117k entries/s against 132k for 4/12, all within that
	// spread.
	po.L0CompactionThreshold = 4
	po.L0StopWritesThreshold = 12
	// A small base level (1 MB where Pebble's default is 64 MB) for
	// the consumer-group churn: XREADGROUP writes PEL records that
	// XACK removes soon after, so a memtable of group work flushes
	// to ~12 KB of L0, and with the default that L0 was merged into
	// the bottom-level table holding the group's key range, a 2.8 MB
	// table rewritten (zstd) every 0.3 s, half the server's CPU
	// under bench/groupbench. With 1 MB the store keeps more levels
	// and the L0 meets a ~300 KB table of recent data instead:
	// XREADGROUP+XACK went from 38-40k to 58-71k acked entries/s
	// (four alternating runs, 1M-entry stream, 50 consumers). Plain
	// appends gain too: 400k unpipelined XADDs compacted 12.4 MB
	// instead of 18.3 MB (5.6 MB flushed). A 10M-entry load took
	// 63.5 s against 57.9 s (within the spread of Redis's own load,
	// 24-33 s, in the same runs); RSS and compacted size did not
	// move; `eddy compact` of it took 13.6-20 s against 4.3 s, as
	// there are more levels to rewrite (bench/bigbench).
	po.LBaseMaxBytes = 1 << 20
	// One compaction at a time, as Pebble's default, and a second
	// (up to half the CPUs) while L0 holds 4 or more sublevels, the
	// same point at which L0 is due for compaction. With one at a
	// time, a long rewrite into the bottom level held the only slot
	// while L0 filled: under bench/bigbench's writes to a large
	// stream a 25.6 s compaction into L6 let L0 reach its stop
	// threshold within 7 s, and every write waited 19 s (writers at
	// 3.8 MB/s for that round instead of ~15); it happened in 2 of
	// 24 rounds. With the second compaction allowed no write stopped
	// in 17 rounds, one with a 39 s bottom compaction (writers 9-17
	// MB/s), and the XRANGE p99 of those rounds did not move beyond
	// the noise. TestWritesGoOnBesideLongCompaction holds one
	// compaction to show it.
	po.CompactionConcurrencyRange = compactionConcurrency
	// The second compaction, at 4 L0 sublevels and one more per 4 after
	// (Pebble's default: per 10, close to the stop at 12).
	po.Experimental.L0CompactionConcurrency = 4
	// 2 MB tables on every level (Pebble's default: 2 MB in L0, doubling
	// from the base level down, so 64 MB at the bottom of a large store).
	// Every XADD rewrites its stream's metadata record and tail node,
	// which sort after the stream's entries, so each flush overlaps the
	// table holding the stream's end (before targets.go split them
	// off), and compacting it rewrites that whole table: the larger the
	// table, the more each flush costs. With
	// 2 MB tables, loading 3M entries with XADD -P 16 spent 5.3-6.3 s in
	// compactions against 10.3-10.8 s, the server 14.2-17.3 s of CPU
	// against 19.3-20.9 s, at 224-267k against 199-215k XADD/s (two
	// alternating runs). bench/bigbench (10M entries, then XRANGE under
	// 100 MB of writes; two alternating runs each): loads of 35.6 and
	// 35.1 s against 44.1 and 36.6 s, no write stall against 9 and 4,
	// XRANGE p99 5.8 and 5.9 ms against 6.6 and 8.0 ms with the writers
	// faster (12-14 against 9.5-12 MB/s); 27.7 bytes/entry compacted
	// against 27.6. A 10M-entry store has ~140 tables once compacted;
	// Pebble keeps up to 1,000 open.
	for i := range po.TargetFileSizes {
		po.TargetFileSizes[i] = 2 << 20
	}
}

// storeEvents is the store's Pebble event listener.
func storeEvents(logger *slog.Logger, stalls *writeStalls) *pebble.EventListener {
	return &pebble.EventListener{
		// The PEL is removed with SingleDelete (stream/group_store.go);
		// Pebble notices some misuses of it while compacting: say so
		// loudly.
		PossibleAPIMisuse: func(info pebble.PossibleAPIMisuseInfo) {
			logger.Error("pebble: possible API misuse", "info", info.String())
		},
		// Write stops are counted for INFO (stalls.go).
		WriteStallBegin: stalls.begin,
		WriteStallEnd:   stalls.end,
	}
}

// levelOptions is the table format of LSM level level: block size,
// filters and compression.
func levelOptions(level int) pebble.LevelOptions {
	var l pebble.LevelOptions
	// 4 KB blocks: a cold XRANGE COUNT 10 decompresses one block or
	// two. 8 KB blocks stored 10% less (19.7 vs 22.0 bytes/entry with
	// zstd) but made cold reads ~30% slower (95 vs 73 µs); 16 KB
	// saved only 1% more.
	l.BlockSize = 4 << 10
	// Bloom filters over the point records only (filter.go):
	// metadata, nodes, groups, consumers and field sets, the records
	// read with Gets, often for keys that do not exist (a stream's
	// first XADD). XADD -P 16 to up to 100,000 random streams did
	// 1.13x the rate without them (bench/abtest.sh, 46 rounds of
	// 100k in four runs, 30 won), where reads of uncached metadata,
	// each visiting every level, had taken 22% of the server's CPU
	// (16% with them); one stream's XADD -P 16 moved 1.01x (12
	// rounds). Entries are left out: a filter over every key serves
	// only point Gets, never the range scans that read entries, and
	// cost 1.26 bytes/entry (31.58 → 32.84 with Snappy). The filters
	// need no Comparer.Split, whose change would make existing stores
	// unreadable; tables written before them are read without.
	l.FilterPolicy = newRecordFilter(10)
	// Compression by level. Most of an append-mostly store sits in
	// the bottom level and is rarely rewritten: zstd level 1
	// (Pebble's Balanced profile) there, 22.8 bytes/entry, 0.90x
	// Redis's RDB, where Snappy everywhere (Pebble's default) takes
	// 31.6 (1.24x) and MinLZ 29.6 (1.16x). Zstd level 3 saved 4% more
	// (22.0) but compacted ~1.7x slower. Flushes get the fastest
	// algorithm (MinLZ on amd64, Snappy on arm64). The price of zstd
	// is in reads of old data that miss the block cache: Pebble's
	// pure-Go zstd allocates a decoder per block (48 KB and 42
	// allocs per cold XRANGE COUNT 10 against 12 KB and 19), the
	// median latency moved within the noise (87 vs 90 µs, p=0.3; 73
	// vs 40 µs in another session) and p99 tripled (1.1 ms vs 0.3
	// ms). Cached and recent data read as before.
	//
	// Every level below L0 gets zstd, not only the bottom one,
	// because an append target's entries (targets.go) now reach the
	// bottom by moves, which keep the compression a table was
	// written with: with MinLZ above the bottom, 1M entries loaded
	// through the engine took 30.8 bytes/entry after a full
	// compaction, with zstd 24.6 (22.8 before the split; moved
	// tables keep their sequence numbers). The price is paid by data
	// that is not an append target's entries, compressed with zstd
	// in every rewrite below L0: XADD -P 16 to 5,000 and to 100,000
	// random streams took 5% more server CPU (41.9 against 39.8 s,
	// 122.6 against 117.1 s; throughput within the spread). A
	// target's records that churn (consumer-group PELs, tail nodes,
	// metadata) are written with the fastest algorithm at every
	// level by the span policy: compressing those rewrites with
	// pure-Go zstd once cost 6% of XREADGROUP+XACK's throughput
	// (bench/groupbench: 77.2k against 72.5k acked entries/s); with
	// the split, groupbench's throughput was unchanged (0.99, the
	// two builds side by side).
	profile := sstable.FastestCompression
	if level > 0 {
		profile = sstable.BalancedCompression
	}
	l.Compression = func() *sstable.CompressionProfile { return profile }
	return l
}

// compactionConcurrency is Pebble's CompactionConcurrencyRange: one
// compaction, and under debt up to half the CPUs, at least two, so that
// the requests keep the other half.
func compactionConcurrency() (lower, upper int) {
	return 1, max(2, runtime.GOMAXPROCS(0)/2)
}

// checkFormat refuses a store of an unknown format before anything opens
// it for writing, so such a store is never rewritten.
func checkFormat(opts Options) error {
	ls, err := opts.FS.List(opts.Dir)
	if err != nil || len(ls) == 0 {
		return nil // a new store
	}
	hasCurrent := false
	for _, n := range ls {
		if n == "CURRENT" || (len(n) > 8 && n[:8] == "MANIFEST") {
			hasCurrent = true
		}
	}
	if !hasCurrent {
		return nil
	}
	ro, err := pebble.Open(opts.Dir, &pebble.Options{FS: opts.FS, ReadOnly: true, Logger: quietLogger{opts.Logger}})
	if err != nil {
		return fmt.Errorf("%w: %s cannot be opened by this binary: %v", ErrUnknownFormat, opts.Dir, err)
	}
	defer ro.Close()
	v, closer, err := ro.Get(storeKey(recordFormat))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil // created but never initialised: initFormat writes it
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	n, perr := strconv.Atoi(string(v))
	if perr != nil || n != FormatVersion && n != formatUpgradable {
		return fmt.Errorf("%w: %s holds store format %q, this binary knows format %d; refusing to open it",
			ErrUnknownFormat, filepath.Clean(opts.Dir), v, FormatVersion)
	}
	return nil
}

func (db *DB) initFormat() error {
	v, closer, err := db.pdb.Get(storeKey(recordFormat))
	if err == nil {
		current := string(v) == strconv.Itoa(FormatVersion)
		if err := closer.Close(); err != nil || current {
			return err
		}
		// A format-3 store (checkFormat let no other through).
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	b := db.pdb.NewBatch()
	defer b.Close()
	if err := b.Set(storeKey(recordFormat), []byte(strconv.Itoa(FormatVersion)), nil); err != nil {
		return err
	}
	if err := db.apply(b); err != nil {
		return err
	}
	// Flushed, the record is in the tables that checkFormat reads
	// before the journal is replayed into them (and needs no sync of
	// the journal).
	return db.pdb.Flush()
}

// SetSyncMode changes the durability policy (CONFIG SET appendfsync).
func (db *DB) SetSyncMode(m SyncMode) { db.mode.Store(uint32(m)) }

// SyncMode is the durability policy in force.
func (db *DB) SyncMode() SyncMode { return db.syncMode() }

// AckAfterSync reports whether the policy in force acknowledges a write
// only once a sync covers it (SyncAlways): a caller that applied writes
// without waiting (NoteApplied) then syncs them (SyncApplied) before it
// answers.
func (db *DB) AckAfterSync() bool { return db.syncMode() == SyncAlways }

func (db *DB) syncMode() SyncMode { return SyncMode(db.mode.Load()) }

// Close flushes and syncs, stops the background work and closes Pebble.
func (db *DB) Close() error {
	db.cancel()
	db.wg.Wait()
	err := db.journal.write(true)
	// Flush the memtable so that the next Open has no journal to replay:
	// replaying a full 8 MB memtable took 190-300 ms of start-up.
	if ferr := db.pdb.Flush(); err == nil {
		err = ferr
	}
	if jerr := db.journal.close(err == nil); err == nil {
		err = jerr
	}
	if cerr := db.pdb.Close(); err == nil {
		err = cerr
	}
	db.cache.Unref()
	return err
}

// Get returns a copy of the value stored under key, or ok=false.
func (db *DB) Get(key []byte) (value []byte, ok bool, err error) {
	return get(db.pdb, key)
}

type getter interface {
	Get(key []byte) ([]byte, io.Closer, error)
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

func get(g getter, key []byte) ([]byte, bool, error) {
	if pointRecord(key) {
		v, ok, err := getRecord(g, key)
		return v, ok, readError(err)
	}
	v, closer, err := g.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, readError(err)
	}
	out := append([]byte(nil), v...)
	return out, true, closer.Close()
}

// getRecord reads a point record (pointRecord: metadata, nodes, groups,
// consumers, field sets) through a prefix seek that consults the Bloom
// filter of every table that may hold it, the bottom level's included.
// Pebble's Get never reads the bottom level's filters (only an iterator
// that asks does, IterOptions.UseL6Filters), so a Get of a key that does
// not exist, most of a store being at the bottom, read a data block of the
// table whose range held the key; when that block held a very large entry
// or key (a 10 MB field), it is larger than a cache shard and was
// decompressed again for every such Get: an XREAD of 10,000 streams that
// did not exist took seconds, holding every other client. Through the
// filters it reads no block at all (TestMissingRecordsReadNoLargeBlock).
func getRecord(g getter, key []byte) ([]byte, bool, error) {
	it, err := g.NewIter(&recordReadOptions)
	if err != nil {
		return nil, false, err
	}
	var out []byte
	ok := it.SeekPrefixGE(key) && bytes.Equal(it.Key(), key)
	if ok {
		var v []byte
		if v, err = it.ValueAndErr(); err == nil {
			out = append([]byte(nil), v...)
		}
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, false, err
	}
	return out, ok, nil
}

// recordReadOptions are getRecord's: read-only, and Pebble copies them
// into each iterator, so one value serves every read without allocating.
var recordReadOptions = pebble.IterOptions{UseL6Filters: true}

// NewIter returns an iterator over [lower, upper) of the committed state.
func (db *DB) NewIter(lower, upper []byte) (*Iter, error) {
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return &Iter{it: it}, nil
}

// apply applies b to the committed state and appends it to the journal,
// without syncing. Every batch goes through here: the journal's order is
// the order of applies, and applied moves once the batch is visible
// (Pebble's Apply returns after publishing it), since an iterator opened
// before that point may not show it, and once it is in the journal's
// buffer, since a sync that starts after applied counts it must write it.
// Its bytes count toward the everysec loop's sync ahead (unsynced).
func (db *DB) apply(b *pebble.Batch) error {
	j := db.journal
	if err := j.failed(); err != nil {
		return err
	}
	j.applyMu.Lock()
	defer j.applyMu.Unlock()
	defer db.applied.Add(1)
	index := j.next
	if err := j.setMarker(b, index); err != nil {
		return err
	}
	db.unsynced.Add(int64(b.Len()))
	if err := db.pdb.Apply(b, pebble.NoSync); err != nil {
		return err
	}
	j.next++
	buffered := j.buffer(index, uint64(b.SeqNum())+uint64(b.Count())-1, b.Repr())
	if buffered >= journalWriteAhead && db.syncMode() != SyncAlways {
		select {
		case j.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// Failed returns the journal's failure, after a write or sync of it
// failed (ErrJournalFailed): from then on the store takes no writes, and
// nothing applied is made durable.
func (db *DB) Failed() error { return db.journal.failed() }

// WaitDurable waits until everything applied so far is as durable as the
// sync mode requires. writers is how many independent writers' work the
// caller applied (a group commit passes its size): with SyncAlways a sync
// waits briefly for writers it expects back (see syncer), and the count
// tells it how many have come.
func (db *DB) WaitDurable(writers int) error { return db.afterApply(writers) }

// Applied counts the batches applied so far. A sync that starts after
// the count was read covers every one of them: SyncApplied.
func (db *DB) Applied() uint64 { return db.applied.Load() }

// Durable is the Applied count every batch up to which is on disk: what
// the store's last successful log sync covered, whoever asked for it.
func (db *DB) Durable() uint64 { return db.syncer.durable.Load() }

// SyncApplied makes everything applied before the call durable, with
// one log sync shared with any other waiter, without gathering writers:
// the caller already holds its writers' replies (the event loop with
// appendfsync always). writers is how many it answers, for Syncs.
func (db *DB) SyncApplied(writers int) error {
	return db.syncer.wait(writers, false)
}

// NoteApplied tells the store that the caller applied writes it will make
// durable itself (SyncApplied) when the sync mode needs it: with
// everysec the background sync learns there is something to sync.
func (db *DB) NoteApplied() {
	if db.syncMode() != SyncAlways {
		db.noteUnsynced()
	}
}

func (db *DB) afterApply(writers int) error {
	if db.syncMode() == SyncAlways {
		return db.syncer.wait(writers, true)
	}
	db.noteUnsynced()
	return nil
}

// noteUnsynced tells the everysec loop that writes wait for its sync, and
// to sync now if walSyncAhead bytes of them do.
func (db *DB) noteUnsynced() {
	select {
	case db.dirty <- struct{}{}:
	default:
	}
	if db.unsynced.Load() >= walSyncAhead {
		select {
		case db.soon <- struct{}{}:
		default:
		}
	}
}

// walSyncAhead is how many bytes of writes the everysec loop lets go
// unsynced before it syncs ahead of its second. It was made for Pebble's
// WAL, which synced what was left of a log when it switched to a new
// memtable, on the thread that commits, the event loop's: under XADD
// -P 16 a memtable filled every 0.3-0.5 s, its log was mostly unsynced
// by then, and its fdatasync took 8-18 ms (strace), each time delaying
// every request in flight. The journal syncs a segment when it starts
// the next, on the goroutine that writes (journal.go), never the loop's
// with everysec; the syncs ahead still keep that sync, and every
// everysec one, short.
const walSyncAhead = 1 << 20

func (db *DB) everySecLoop(ctx context.Context, every time.Duration) {
	defer db.wg.Done()
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			select {
			case <-db.dirty:
			default:
				continue
			}
		case <-db.soon:
			select {
			case <-db.dirty:
			default:
			}
		}
		db.unsynced.Store(0)
		if db.syncMode() == SyncNo {
			// The rest of the journal's buffer reaches the operating
			// system within the second; the syncing is left to it.
			if err := db.journal.write(false); err != nil {
				db.logger.Error("background journal write failed", "err", err)
			}
			continue
		}
		if err := db.syncer.wait(0, false); err != nil {
			db.logger.Error("background fsync failed", "err", err)
		}
	}
}

// syncer implements group commit at the sync: a caller that needs
// durability takes a ticket after its write was applied; one sync that
// starts after the ticket was taken covers it, so concurrent callers share
// syncs.
//
// It also gathers: with appendfsync always, the writers a sync answers
// come back with their next writes shortly after it ends. Were the next
// sync to start at the first of them, it would answer only the quickest,
// the rest would wait for the one after, and the writers would split into
// two cohorts, each served every other sync: half the throughput. So a
// sync waits, after the previous one ended, until as many writers are
// waiting as were active in the previous sync period (those it answered
// and those that queued during it), or until as long as that sync took
// has passed (at most maxGather): a gap that long means the writers are
// not coming, and waiting never costs more than the sync it saves. A lone
// writer, or one coming after a quiet spell, waits not at all.
type syncer struct {
	sync    func() error
	applied *atomic.Uint64 // the store's count of applied batches (DB.Applied)
	// durable is the applied count when the last successful sync
	// started: every batch up to it is on disk (DB.Durable).
	durable atomic.Uint64

	mu      sync.Mutex
	cond    *sync.Cond // on mu
	issued  uint64     // guarded by mu
	covered uint64     // guarded by mu: tickets covered by a finished sync
	running bool       // guarded by mu
	err     error      // guarded by mu: result of the last sync

	gatherMax time.Duration // longest wait for writers to come back; maxGather unless a test sets it

	pending int           // guarded by mu: writers waiting for a sync not yet started
	expect  int           // guarded by mu: writers the next sync waits for
	lastEnd time.Time     // guarded by mu: when the last sync ended
	lastDur time.Duration // guarded by mu: how long it took
	armed   time.Time     // guarded by mu: the gathering deadline a timer is set for

	// For Syncs: syncs run, the writers they answered, their length.
	syncs   uint64        // guarded by mu
	answers uint64        // guarded by mu
	synced  time.Duration // guarded by mu
}

// maxGather bounds how long a sync waits for writers to come back.
const maxGather = 2 * time.Millisecond

// wait returns once a sync that started after the call covers the
// caller's writes. writers is how many independent writers those writes
// carry (a group commit's size); gather lets the sync wait for more of
// them (never with 0 writers).
func (s *syncer) wait(writers int, gather bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cond == nil {
		s.cond = sync.NewCond(&s.mu)
	}
	s.issued++
	ticket := s.issued
	s.pending += writers
	for s.covered < ticket {
		if s.running || (gather && writers > 0 && s.gatheringLocked()) {
			s.cond.Wait()
			continue
		}
		s.running = true
		target, answers := s.issued, s.pending
		s.pending = 0
		s.mu.Unlock()
		var at uint64
		if s.applied != nil {
			at = s.applied.Load()
		}
		start := time.Now()
		err := s.sync()
		end := time.Now()
		s.mu.Lock()
		if err == nil && at > s.durable.Load() {
			s.durable.Store(at) // under mu: it only grows
		}
		s.running = false
		s.covered = target
		s.err = err
		s.lastEnd, s.lastDur = end, end.Sub(start)
		s.syncs++
		s.answers += uint64(answers)
		s.synced += s.lastDur
		s.expect = answers + s.pending
		s.cond.Broadcast()
	}
	return s.err
}

// SyncStats is what the store knows of the log syncs it ran for writes
// since it was opened: with appendfsync always one per group of writers,
// with everysec one a second at most.
type SyncStats struct {
	Count   uint64        // syncs run
	Writers uint64        // writers they answered (appendfsync always)
	Time    time.Duration // their length in all, as the writers waited it
}

// Syncs reports the log syncs the store ran for writes. Writers per sync
// say how well concurrent writers share them; Time per sync includes
// Pebble's hand-off to its log writer, not only the fsync.
func (db *DB) Syncs() SyncStats {
	s := &db.syncer
	s.mu.Lock()
	defer s.mu.Unlock()
	return SyncStats{Count: s.syncs, Writers: s.answers, Time: s.synced}
}

// gatheringLocked reports whether the next sync should wait for more
// writers, arming a timer that wakes the waiters at the deadline.
func (s *syncer) gatheringLocked() bool {
	if s.pending >= s.expect {
		return false
	}
	limit := s.gatherMax
	if limit == 0 {
		limit = maxGather
	}
	deadline := s.lastEnd.Add(min(s.lastDur, limit))
	d := time.Until(deadline)
	if d <= 0 {
		return false
	}
	if !s.armed.Equal(deadline) {
		s.armed = deadline
		time.AfterFunc(d, func() {
			s.mu.Lock()
			s.cond.Broadcast()
			s.mu.Unlock()
		})
	}
	return true
}

// KickGC asks the background collector to drop garbage now.
func (db *DB) KickGC() {
	select {
	case db.gcKick <- struct{}{}:
	default:
	}
}

// PauseGC stops the background collector until resume is called, waiting
// for a pass in flight to end. A replica loading a full sync pauses it: a
// pass that read the old store's garbage records would otherwise delete
// their ranges after the load, where the primary's data now lives (its
// versions need not differ from the old ones).
func (db *DB) PauseGC() (resume func()) {
	db.gcMu.Lock()
	db.gcPaused++
	db.gcMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			db.gcMu.Lock()
			db.gcPaused--
			db.gcMu.Unlock()
			db.KickGC()
		})
	}
}

func (db *DB) gcLoop(ctx context.Context) {
	defer db.wg.Done()
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-db.gcKick:
		case <-t.C:
		}
		if err := db.collectGarbage(); err != nil {
			db.logger.Error("dropping deleted keys failed", "err", err)
		}
	}
}

// collectGarbage drops the data ranges of deleted key versions.
// It does nothing while the collector is paused.
func (db *DB) collectGarbage() error {
	db.gcMu.Lock()
	defer db.gcMu.Unlock()
	if db.gcPaused > 0 {
		return nil
	}
	lower, upper := GarbageBounds()
	it, err := db.NewIter(lower, upper)
	if err != nil {
		return err
	}
	b := db.pdb.NewBatch()
	defer b.Close()
	for ok := it.First(); ok; ok = it.Next() {
		lo, hi, err := DecodeGarbage(it.Key(), it.Value())
		if err != nil {
			it.Close()
			return err
		}
		_ = b.DeleteRange(lo, hi, nil)
		_ = b.Delete(it.Key(), nil)
	}
	if err := it.Close(); err != nil {
		return err
	}
	if b.Empty() {
		return nil
	}
	return db.apply(b)
}

// HighVersion reads the persisted version high-water mark.
func (db *DB) HighVersion() (uint64, error) {
	v, ok, err := db.Get(storeKey(recordVersionHigh))
	if err != nil || !ok {
		return 0, err
	}
	return strconv.ParseUint(string(v), 10, 64)
}

// SetHighVersion records the version high-water mark in b.
func (b *Batch) SetHighVersion(v uint64) error {
	return b.Set(storeKey(recordVersionHigh), strconv.AppendUint(nil, v, 10))
}

// Iter iterates keys in order. Key and Value are valid until the next move.
type Iter struct {
	it    *pebble.Iterator
	cache *IterCache // the IterCache that lent it, if any
}

// First moves to the first key.
func (i *Iter) First() bool { return i.it.First() }

// Last moves to the last key.
func (i *Iter) Last() bool { return i.it.Last() }

// SeekGE moves to the first key >= k.
func (i *Iter) SeekGE(k []byte) bool { return i.it.SeekGE(k) }

// SeekLT moves to the last key < k.
func (i *Iter) SeekLT(k []byte) bool { return i.it.SeekLT(k) }

// Next moves forward.
func (i *Iter) Next() bool { return i.it.Next() }

// Prev moves backward.
func (i *Iter) Prev() bool { return i.it.Prev() }

// Valid reports whether the iterator is on a key.
func (i *Iter) Valid() bool { return i.it.Valid() }

// Key returns the current key.
func (i *Iter) Key() []byte { return i.it.Key() }

// Value returns the current value.
func (i *Iter) Value() []byte { return i.it.Value() }

// SetBounds replaces the iterator's bounds, which it then owns as it owns
// NewIter's; the iterator must be positioned again (First, Last, SeekGE,
// SeekLT).
func (i *Iter) SetBounds(lower, upper []byte) { i.it.SetBounds(lower, upper) }

// Close releases the iterator. One lent by an IterCache goes back to it
// open, and reports the error it met, as Close would.
func (i *Iter) Close() error {
	it := i.it
	if it == nil {
		return nil // closed already
	}
	i.it = nil
	if c := i.cache; c != nil {
		i.cache = nil
		c.lent = false
		if err := it.Error(); err != nil {
			c.it = nil
			it.Close()
			return readError(err)
		}
		return nil
	}
	return readError(it.Close())
}

// quietLogger routes Pebble's own messages to slog at debug level, errors
// at error level.
type quietLogger struct{ l *slog.Logger }

func (q quietLogger) Infof(format string, args ...interface{}) {
	q.l.Debug(fmt.Sprintf(format, args...))
}
func (q quietLogger) Errorf(format string, args ...interface{}) {
	q.l.Error(fmt.Sprintf(format, args...))
}
func (q quietLogger) Fatalf(format string, args ...interface{}) {
	q.l.Error(fmt.Sprintf(format, args...))
	os.Exit(1)
}
