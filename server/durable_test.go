package server

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/eddy-streams/eddy/storage"
	"github.com/eddy-streams/eddy/stream"
)

// syncGate is a file system whose journal syncs wait while it is shut: the
// tests see what a server does while a sync is in flight.
type syncGate struct {
	vfs.FS
	mu      sync.Mutex
	shut    chan struct{} // guarded by mu; nil while open
	waiting atomic.Int32  // syncs held at the gate
}

func (g *syncGate) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := g.FS.Create(name, c)
	return g.wrap(name, f), err
}

func (g *syncGate) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := g.FS.ReuseForWrite(old, name, c)
	return g.wrap(name, f), err
}

func (g *syncGate) wrap(name string, f vfs.File) vfs.File {
	if f == nil || !strings.HasSuffix(name, ".journal") {
		return f
	}
	return &gatedFile{File: f, g: g}
}

func (g *syncGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut == nil {
		g.shut = make(chan struct{})
	}
}

func (g *syncGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
}

func (g *syncGate) pass() {
	g.mu.Lock()
	shut := g.shut
	g.mu.Unlock()
	if shut != nil {
		g.waiting.Add(1)
		<-shut
		g.waiting.Add(-1)
	}
}

type gatedFile struct {
	vfs.File
	g *syncGate
}

func (f *gatedFile) Sync() error     { f.g.pass(); return f.File.Sync() }
func (f *gatedFile) SyncData() error { f.g.pass(); return f.File.SyncData() }
func (f *gatedFile) SyncTo(n int64) (bool, error) {
	f.g.pass()
	return f.File.SyncTo(n)
}

// expectNoReply fails if a reply arrives within d: one that must wait
// for a sync the test holds.
func (r *rawConn) expectNoReply(d time.Duration) {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(d))
	_, err := r.rd.Peek(1)
	r.c.SetReadDeadline(time.Time{})
	var ne net.Error
	if err == nil {
		r.t.Fatal("a reply came before the log sync")
	} else if !errors.As(err, &ne) || !ne.Timeout() {
		r.t.Fatal(err)
	}
}

// With appendfsync always, no reply leaves before the log sync that
// covers the writes before it, as Redis writes its replies after the
// AOF's fsync; meanwhile the server goes on applying other clients'
// writes (the event loop does not wait for a large group's sync).
func TestAlwaysRepliesAfterSync(t *testing.T) {
	gate := &syncGate{FS: vfs.Default}
	s := startServerOn(t, gate, func(c *Config) {
		c.AppendFsync = "always"
	})
	t.Cleanup(gate.open) // before the server stops
	a, b := dialRaw(t, s), dialRaw(t, s)
	b.expect("+PONG\r\n", "PING")

	// More writes than syncAheadMin in one turn: the loop leaves their
	// sync running.
	const n = 2 * syncAheadMin
	xadd := "*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$1\r\nf\r\n$1\r\nv\r\n"
	gate.close()
	a.send(strings.Repeat(xadd, n))
	waitFor(t, func() bool { return gate.waiting.Load() > 0 })
	a.expectNoReply(50 * time.Millisecond)

	applied := s.engine.Applied()
	b.send(xadd)
	waitFor(t, func() bool { return s.engine.Applied() > applied })
	b.expectNoReply(50 * time.Millisecond)

	gate.open()
	for i := 0; i < n; i++ {
		if got := a.reply(); !strings.HasPrefix(got, "$") {
			t.Fatalf("XADD %d: %q", i, got)
		}
	}
	if got := b.reply(); !strings.HasPrefix(got, "$") {
		t.Fatalf("XADD: %q", got)
	}
	b.expect(":129\r\n", "XLEN", "s")

	// A lone write waits for its sync too.
	gate.close()
	b.send(xadd)
	waitFor(t, func() bool { return gate.waiting.Load() > 0 })
	b.expectNoReply(50 * time.Millisecond)
	gate.open()
	if got := b.reply(); !strings.HasPrefix(got, "$") {
		t.Fatalf("XADD: %q", got)
	}
}

// With appendfsync always, every write acknowledged before a power loss
// is in what the loss keeps (Pebble's crashable file system keeps only
// synced data). The writers pipeline more than syncAheadMin writes at a
// time, so the event loop leaves their syncs running while it goes on.
func TestAlwaysAckedWritesSurviveCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	var dir string
	s := startServerOn(t, fs, func(c *Config) {
		c.AppendFsync = "always"
		dir = c.Dir
	})
	const writers, batch = 4, 2 * syncAheadMin
	var acked [writers]atomic.Int64 // entries 1..acked[w] of stream s<w> were acknowledged
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		c := dialRaw(t, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("s%d", w)
			for n := 0; ; n += batch {
				select {
				case <-stop:
					return
				default:
				}
				var b strings.Builder
				for j := n + 1; j <= n+batch; j++ {
					id := fmt.Sprintf("%d-1", j)
					fmt.Fprintf(&b, "*5\r\n$4\r\nXADD\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$1\r\nf\r\n$1\r\nv\r\n", len(key), key, len(id), id)
				}
				c.send(b.String())
				for j := n + 1; j <= n+batch; j++ {
					id := fmt.Sprintf("%d-1", j)
					if got, want := c.reply(), fmt.Sprintf("$%d\r\n%s\r\n", len(id), id); got != want {
						t.Errorf("XADD %s %s: %q", key, id, got)
						return
					}
					acked[w].Store(int64(j))
				}
			}
		}()
	}
	// The crash comes while the writers write, once each has some
	// acknowledged: what was acknowledged before it must survive.
	waitFor(t, func() bool {
		for w := range writers {
			if acked[w].Load() < 2*batch {
				return false
			}
		}
		return true
	})
	var before [writers]int64
	for w := range writers {
		before[w] = acked[w].Load()
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	close(stop)
	wg.Wait()

	db, err := storage.Open(storage.Options{Dir: dir, FS: crashed, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e, err := stream.Open(db, stream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		var n int64
		err := e.View(func(tx *stream.Tx) error {
			var err error
			n, err = tx.XLen(0, []byte(fmt.Sprintf("s%d", w)))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if n < before[w] {
			t.Errorf("s%d: %d entries after the crash, %d were acknowledged before it", w, n, before[w])
		}
	}
}

// failSyncFS fails the journal's syncs with EIO while fail is set.
type failSyncFS struct {
	vfs.FS
	fail atomic.Bool
}

func (fs *failSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	if err != nil || !strings.HasSuffix(name, ".journal") {
		return f, err
	}
	return &failSyncFile{File: f, fs: fs}, nil
}

type failSyncFile struct {
	vfs.File
	fs *failSyncFS
}

func (f *failSyncFile) SyncData() error {
	if f.fs.fail.Load() {
		return syscall.EIO
	}
	return f.File.SyncData()
}

// Once a journal sync fails, the write it held is never acknowledged (its
// client is disconnected, as Redis exits when an fsync fails with
// appendfsync always), later writes get Redis's refusal after a failed
// AOF write, and reads go on.
func TestJournalFailureRefusesWrites(t *testing.T) {
	fs := &failSyncFS{FS: vfs.Default}
	s := startServerOn(t, fs, func(c *Config) {
		c.AppendFsync = "always"
	})
	a, b := dialRaw(t, s), dialRaw(t, s)
	a.expect("$3\r\n1-1\r\n", "XADD", "s", "1-1", "f", "v")
	fs.fail.Store(true)
	a.cmd("XADD", "s", "2-1", "f", "v")
	// The event loop drops the client whose reply the sync held; a
	// connection's own goroutine gets the sync's error and replies so.
	if line, err := a.rd.ReadString('\n'); err == nil && !strings.HasPrefix(line, "-MISCONF Errors writing to the AOF file: ") {
		t.Fatalf("XADD whose sync failed: %q", line)
	}
	fs.fail.Store(false)
	b.expect("-MISCONF Errors writing to the AOF file: Input/output error\r\n", "XADD", "s", "3-1", "f", "v")
	b.expect("-MISCONF Errors writing to the AOF file: Input/output error\r\n", "XADD", "t", "*", "f", "v")
	b.expect("*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n", "XRANGE", "s", "-", "1-1")
	b.expect("+PONG\r\n", "PING")
}
