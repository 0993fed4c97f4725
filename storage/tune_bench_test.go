package storage_test

import (
	"bufio"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"

	"github.com/eddy-streams/eddy/storage"
	"github.com/eddy-streams/eddy/stream"
)

// The tuning benchmarks load the same XADD-shaped stream into stores
// opened with different Pebble settings and report what each costs: bytes
// on disk per entry after a full compaction, load rate, XRANGE latency of
// old data and the memory Pebble holds. They are slow (seconds per
// setting), so they run only when asked:
//
//	CGO_ENABLED=0 go test -run '^$' -bench 'TuneLoad' -count 3 ./storage/ -tune.entries 1000000
//	CGO_ENABLED=0 go test -run '^$' -bench 'TuneRead' -benchtime 3000x -count 8 ./storage/ \
//		-tune.entries 1000000 -tune.configs eddy,snappy
//
// CGO_ENABLED=0 because the eddy binary is built so, and Pebble's zstd is
// another implementation with cgo. BenchmarkTuneRedisRDB loads the same
// entries into a redis-server and reports its dump.rdb bytes per entry,
// the figure the on-disk size is held against.
var (
	tuneEntries = flag.Int("tune.entries", 0, "entries the tuning benchmarks load; 0 skips them")
	tuneConfigs = flag.String("tune.configs", "", "comma-separated tuning configurations to run; empty runs all")
)

// tuneCacheRatio scales the block cache with the data: Eddy's default
// cache (64 MB) against the 10M-entry store of issue 4, so that reads of
// old data miss the cache about as often as they would there.
const tuneCacheRatio = 64 << 20 / 10_000_000

// tuneConfig is one set of Pebble settings under test, applied over the
// options storage.Open builds.
type tuneConfig struct {
	name string
	f    func(o *pebble.Options)
}

func setLevels(o *pebble.Options, f func(l *pebble.LevelOptions, level int)) {
	for i := range o.Levels {
		f(&o.Levels[i], i)
	}
}

func compression(p *sstable.CompressionProfile) func(l *pebble.LevelOptions, level int) {
	return func(l *pebble.LevelOptions, _ int) {
		l.Compression = func() *sstable.CompressionProfile { return p }
	}
}

// pebbleDefaults undoes Eddy's tuning, back to Pebble's own defaults (as
// the store was opened before the tuning): Snappy, 4 KB blocks, no
// filters, 4 MB memtables, L0 thresholds 4/12.
func pebbleDefaults(o *pebble.Options) {
	o.Levels = [len(o.Levels)]pebble.LevelOptions{}
	o.MemTableSize = 0
	o.MemTableStopWritesThreshold = 0
	o.L0CompactionThreshold = 0
	o.L0StopWritesThreshold = 0
	o.TargetFileSizes = [len(o.TargetFileSizes)]int64{}
}

var tuneConfigList = []tuneConfig{
	{"eddy", func(*pebble.Options) {}},
	{"pebble-defaults", pebbleDefaults},
	{"snappy", func(o *pebble.Options) { setLevels(o, compression(sstable.SnappyCompression)) }},
	{"none", func(o *pebble.Options) { setLevels(o, compression(sstable.NoCompression)) }},
	{"minlz", func(o *pebble.Options) { setLevels(o, compression(sstable.MinLZCompression)) }},
	{"zstd", func(o *pebble.Options) { setLevels(o, compression(sstable.ZstdCompression)) }},
	{"zstd-bottom", zstdBottom},
	{"zstd-bottom-8k", func(o *pebble.Options) {
		zstdBottom(o)
		setLevels(o, func(l *pebble.LevelOptions, _ int) { l.BlockSize = 8 << 10 })
	}},
	{"zstd-bottom-16k", func(o *pebble.Options) {
		zstdBottom(o)
		setLevels(o, func(l *pebble.LevelOptions, _ int) { l.BlockSize = 16 << 10 })
	}},
	{"pebble-balanced", func(o *pebble.Options) {
		o.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionBalanced })
	}},
	{"pebble-good", func(o *pebble.Options) {
		o.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionGood })
	}},
	{"block-4k", func(o *pebble.Options) { setLevels(o, func(l *pebble.LevelOptions, _ int) { l.BlockSize = 4 << 10 }) }},
	{"block-16k", func(o *pebble.Options) { setLevels(o, func(l *pebble.LevelOptions, _ int) { l.BlockSize = 16 << 10 }) }},
	{"block-32k", func(o *pebble.Options) { setLevels(o, func(l *pebble.LevelOptions, _ int) { l.BlockSize = 32 << 10 }) }},
	{"bloom-10", func(o *pebble.Options) {
		setLevels(o, func(l *pebble.LevelOptions, _ int) { l.FilterPolicy = bloom.FilterPolicy(10) })
	}},
	{"bloom-none", func(o *pebble.Options) {
		setLevels(o, func(l *pebble.LevelOptions, _ int) { l.FilterPolicy = pebble.NoFilterPolicy })
	}},
	{"memtable-4m", func(o *pebble.Options) { o.MemTableSize = 4 << 20 }},
	{"memtable-16m", func(o *pebble.Options) { o.MemTableSize = 16 << 20 }},
	{"memtable-64m", func(o *pebble.Options) { o.MemTableSize = 64 << 20 }},
	{"l0-2-24", func(o *pebble.Options) { o.L0CompactionThreshold, o.L0StopWritesThreshold = 2, 24 }},
	{"l0-4-12", func(o *pebble.Options) { o.L0CompactionThreshold, o.L0StopWritesThreshold = 4, 12 }},
	{"l0-8-32", func(o *pebble.Options) { o.L0CompactionThreshold, o.L0StopWritesThreshold = 8, 32 }},
	// Pebble's table sizes (2 MB in L0, doubling from the base level) in
	// place of Eddy's 2 MB everywhere: Open fills the zeros in.
	{"files-doubling", func(o *pebble.Options) { clear(o.TargetFileSizes[:]) }},
	// One index block per table (no two-level index): a 2 MB table of
	// 4 KB blocks has an index of ~20 KB, which Pebble's default (an
	// index block as large as a data block) splits in two levels. Not
	// taken: reads of old data were slower, as a cache miss reads the
	// whole index block (TuneRead; bench/results/HISTORY.md, "Figures
	// that stood in code comments").
	{"index-256k", func(o *pebble.Options) {
		setLevels(o, func(l *pebble.LevelOptions, _ int) { l.IndexBlockSize = 256 << 10 })
	}},
}

// zstdBottom compresses the two bottom levels, which hold almost all of
// an append-mostly store, with zstd, and the levels above, whose data is
// rewritten soon, with Pebble's fastest algorithm.
func zstdBottom(o *pebble.Options) {
	setLevels(o, func(l *pebble.LevelOptions, level int) {
		p := sstable.FastestCompression
		if level >= len(o.Levels)-2 {
			p = sstable.ZstdCompression
		}
		l.Compression = func() *sstable.CompressionProfile { return p }
	})
}

// tuneEntry returns the field-value pairs of the i-th entry of the tuning
// stream: three fields, about 60 bytes of names and values, with values
// as varied as an event stream's (a few event kinds, many users and
// pages). The same seed gives the same entries to Eddy and Redis.
func tuneEntry(r *rand.Rand, buf []byte) (fv [][]byte, _ []byte) {
	events := [...]string{"page_view", "click", "add_to_cart", "checkout", "login", "logout", "search", "purchase"}
	refs := [...]string{"home", "search", "email", "ad"}
	buf = buf[:0]
	buf = append(buf, events[r.IntN(len(events))]...)
	e := len(buf)
	buf = append(buf, "user:"...)
	buf = strconv.AppendInt(buf, 100000+r.Int64N(900000), 10)
	u := len(buf)
	buf = append(buf, "/products/"...)
	buf = strconv.AppendInt(buf, r.Int64N(100000), 10)
	buf = append(buf, "?ref="...)
	buf = append(buf, refs[r.IntN(len(refs))]...)
	return [][]byte{
		[]byte("event"), buf[:e],
		[]byte("user"), buf[e:u],
		[]byte("path"), buf[u:],
	}, buf
}

// selectedConfigs returns the configurations -tune.configs names, or
// skips b when -tune.entries is not set.
func selectedConfigs(b *testing.B) []tuneConfig {
	if *tuneEntries == 0 {
		b.Skip("set -tune.entries (e.g. 1000000) to run the tuning benchmarks")
	}
	if *tuneConfigs == "" {
		return tuneConfigList
	}
	var out []tuneConfig
	for _, c := range tuneConfigList {
		if slices.Contains(strings.Split(*tuneConfigs, ","), c.name) {
			out = append(out, c)
		}
	}
	return out
}

// built holds, per configuration, the directory of the last store
// BenchmarkTuneLoad built, for BenchmarkTuneRead; TestMain removes them.
var (
	built    = map[string]builtStore{}
	builtDir string
)

type builtStore struct {
	dir     string
	ids     []stream.ID // the first ID of each group commit, in order
	metrics map[string]float64
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

// BenchmarkTuneLoad loads -tune.entries entries with each configuration
// and compacts the store fully. It reports the load time per entry, the
// bytes of tables per entry and of every file of the store per entry
// (the WAL Pebble keeps for reuse included), the compaction's duration
// and the largest memtable memory seen while loading. Each run is one
// load, whatever -benchtime says: its figures are the metrics, not ns/op.
func BenchmarkTuneLoad(b *testing.B) {
	for _, c := range selectedConfigs(b) {
		b.Run(c.name, func(b *testing.B) {
			st := buildStore(b, c)
			for b.Loop() {
				// b.Loop makes this function run once; the load above is
				// the measurement.
			}
			// After the loop: b.Loop's start drops metrics reported before.
			for unit, v := range st.metrics {
				b.ReportMetric(v, unit)
			}
		})
	}
}

// BenchmarkTuneRead is XRANGE s <id> + COUNT 10 from a random ID in the
// older half of the stream, with the block cache empty at the start and
// scaled to the data as Eddy's default is to a 10M-entry stream: most
// reads meet blocks that are not cached, as reads of old data do. It
// reads the store BenchmarkTuneLoad built last, or builds one.
func BenchmarkTuneRead(b *testing.B) {
	for _, c := range selectedConfigs(b) {
		b.Run(c.name, func(b *testing.B) {
			st, ok := built[c.name]
			if !ok {
				st = buildStore(b, c)
			}
			db, e := openTune(b, tuneOptions(st.dir, c))
			defer db.Close()
			key := []byte("s")
			old := st.ids[:len(st.ids)/2]
			r := rand.New(rand.NewPCG(3, 4))
			lat := make([]time.Duration, 0, 4096)
			b.ReportAllocs()
			for b.Loop() {
				from := old[r.IntN(len(old))]
				t0 := time.Now()
				err := e.View(func(tx *stream.Tx) error {
					es, err := tx.XRange(0, key, from, stream.MaxID, 10, false)
					if err == nil && len(es) != 10 {
						err = fmt.Errorf("XRANGE from %v: %d entries", from, len(es))
					}
					return err
				})
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

func tuneOptions(dir string, c tuneConfig) storage.Options {
	return storage.WithTuning(storage.Options{
		Dir:       dir,
		CacheSize: max(int64(*tuneEntries)*tuneCacheRatio, 1<<20),
		Sync:      storage.SyncEverySec,
	}, c.f)
}

// buildStore loads the tuning stream into a new store with configuration
// c, compacts it fully, measures what it cost and records it in built.
func buildStore(b *testing.B, c tuneConfig) builtStore {
	n := *tuneEntries
	if builtDir == "" {
		d, err := os.MkdirTemp("", "eddy-tune-")
		if err != nil {
			b.Fatal(err)
		}
		builtDir = d
	}
	if old, ok := built[c.name]; ok {
		if err := os.RemoveAll(old.dir); err != nil {
			b.Fatal(err)
		}
	}
	dir, err := os.MkdirTemp(builtDir, c.name+"-")
	if err != nil {
		b.Fatal(err)
	}
	opts := tuneOptions(dir, c)
	db, e := openTune(b, opts)
	key := []byte("s")

	// Load as 50 pipelining clients reach the engine: group commits of
	// 50 XADDs.
	const group = 50
	r := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	ids := make([]stream.ID, 0, n/group+1)
	var memMax uint64
	start := time.Now()
	for i := 0; i < n; i += group {
		err := e.Update(func(tx *stream.Tx) error {
			for j := i; j < min(i+group, n); j++ {
				var fv [][]byte
				fv, buf = tuneEntry(r, buf)
				id, _, err := tx.XAdd(0, key, &stream.XAddArgs{Auto: true, Fields: fv})
				if err != nil {
					return err
				}
				if j == i {
					ids = append(ids, id)
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if i%(100*group) == 0 {
			memMax = max(memMax, storage.PebbleMetrics(db).MemTable.Size)
		}
	}
	loadDur := time.Since(start)
	start = time.Now()
	if err := storage.CompactAll(db); err != nil {
		b.Fatal(err)
	}
	compactDur := time.Since(start)
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	sst, all := dirBytes(b, dir)
	st := builtStore{dir: dir, ids: ids, metrics: map[string]float64{
		"load-ns/entry": float64(loadDur.Nanoseconds()) / float64(n),
		"sst-B/entry":   float64(sst) / float64(n),
		"disk-B/entry":  float64(all) / float64(n),
		"compact-s":     compactDur.Seconds(),
		"memtable-MB":   float64(memMax) / (1 << 20),
	}}
	built[c.name] = st
	return st
}

func openTune(b *testing.B, opts storage.Options) (*storage.DB, *stream.Engine) {
	b.Helper()
	db, err := storage.Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	e, err := stream.Open(db, stream.Options{})
	if err != nil {
		db.Close()
		b.Fatal(err)
	}
	return db, e
}

// dirBytes returns the bytes of a store's tables and of all its files.
func dirBytes(b *testing.B, dir string) (sst, all int64) {
	b.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		all += info.Size()
		if strings.HasSuffix(p, ".sst") {
			sst += info.Size()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return sst, all
}

// BenchmarkTuneRedisRDB loads the tuning stream into a redis-server on a
// free port, SAVEs, and reports dump.rdb's bytes per entry. The work is
// done once; b.N only repeats a PING.
func BenchmarkTuneRedisRDB(b *testing.B) {
	n := *tuneEntries
	if n == 0 {
		b.Skip("set -tune.entries (e.g. 1000000) to run the tuning benchmarks")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		b.Skip("redis-server not installed")
	}
	dir := b.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var conn net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; {
		if conn, err = net.Dial("tcp", l.Addr().String()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("redis-server on port %d: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond) // polling for the port to open
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	wr := bufio.NewWriterSize(conn, 1<<16)
	r := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	const pipe = 1000
	for i := 0; i < n; i += pipe {
		k := min(pipe, n-i)
		for range k {
			var fv [][]byte
			fv, buf = tuneEntry(r, buf)
			writeCommand(wr, append([][]byte{[]byte("XADD"), []byte("s"), []byte("*")}, fv...))
		}
		if err := wr.Flush(); err != nil {
			b.Fatal(err)
		}
		for range k {
			line, err := rd.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if line[0] == '-' {
				b.Fatalf("XADD: %s", line)
			}
			if _, err := rd.ReadString('\n'); err != nil { // the ID of the $ reply
				b.Fatal(err)
			}
		}
	}
	writeCommand(wr, [][]byte{[]byte("SAVE")})
	if err := wr.Flush(); err != nil {
		b.Fatal(err)
	}
	if line, err := rd.ReadString('\n'); err != nil || line != "+OK\r\n" {
		b.Fatalf("SAVE: %q %v", line, err)
	}
	st, err := os.Stat(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		b.Fatal(err)
	}
	writeCommand(wr, [][]byte{[]byte("INFO"), []byte("memory")})
	if err := wr.Flush(); err != nil {
		b.Fatal(err)
	}
	rss := -1
	if _, err := rd.ReadString('\n'); err != nil { // the bulk string's length
		b.Fatal(err)
	}
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if v, ok := strings.CutPrefix(line, "used_memory_rss:"); ok {
			if rss, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				b.Fatal(err)
			}
		}
		if line == "\r\n" {
			break
		}
	}
	if rss < 0 {
		b.Fatal("INFO memory has no used_memory_rss")
	}
	for b.Loop() {
		writeCommand(wr, [][]byte{[]byte("PING")})
		if err := wr.Flush(); err != nil {
			b.Fatal(err)
		}
		if _, err := rd.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(st.Size())/float64(n), "rdb-B/entry")
	b.ReportMetric(float64(rss)/float64(n), "rss-B/entry")
}

func writeCommand(w *bufio.Writer, args [][]byte) {
	fmt.Fprintf(w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(w, "$%d\r\n%s\r\n", len(a), a)
	}
}
