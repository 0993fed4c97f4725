package storage

import (
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// TestCompactionPause holds when a compaction pauses: only after work
// has elapsed since it last looked, and only if goroutines wait.
func TestCompactionPause(t *testing.T) {
	tests := []struct {
		name      string
		elapsed   time.Duration
		waiting   bool
		wantLook  bool
		wantPause bool
	}{
		{"too soon, waiters", paceWork / 2, true, false, false},
		{"due, waiters", paceWork, true, true, true},
		{"due, nobody waits", 3 * paceWork, false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newCompactionPacer()
			looked, paused := 0, time.Duration(0)
			p.waiting = func() bool { looked++; return tt.waiting }
			p.sleep = func(d time.Duration) { paused += d }
			c := &pacedCompaction{p: p, since: time.Now().Add(-tt.elapsed)}
			c.CumulativeStats(pebble.CompactionGrantHandleStats{})
			if (looked > 0) != tt.wantLook {
				t.Errorf("looked %d times, want a look: %v", looked, tt.wantLook)
			}
			if want := map[bool]time.Duration{true: pacePause}[tt.wantPause]; paused != want {
				t.Errorf("paused %v, want %v", paused, want)
			}
			// A look starts the next stretch of work: an immediate
			// second call neither looks nor pauses.
			looked, paused = 0, 0
			c.CumulativeStats(pebble.CompactionGrantHandleStats{})
			if tt.wantLook && (looked != 0 || paused != 0) {
				t.Errorf("second call looked %d times, paused %v", looked, paused)
			}
		})
	}
}

// fakeCompactions stands for a DB: it allows `allowed` compactions at a
// time and has `queued` waiting.
type fakeCompactions struct {
	allowed, queued int
	granted         []pebble.CompactionGrantHandle
}

func (f *fakeCompactions) GetAllowedWithoutPermission() int { return f.allowed }
func (f *fakeCompactions) GetWaitingCompaction() (bool, pebble.WaitingCompaction) {
	return f.queued > 0, pebble.WaitingCompaction{}
}
func (f *fakeCompactions) Schedule(h pebble.CompactionGrantHandle) bool {
	if f.queued == 0 {
		return false
	}
	f.queued--
	f.granted = append(f.granted, h)
	return true
}

// TestCompactionPacerGrants holds the scheduling the pacer took over from
// Pebble's own scheduler: no more compactions than the DB allows, the
// next one granted when one ends, none after Unregister.
func TestCompactionPacerGrants(t *testing.T) {
	db := &fakeCompactions{allowed: 2, queued: 5}
	p := newCompactionPacer()
	p.db = db // Register without its granter goroutine: grants happen only where the test calls them
	close(p.done)

	p.grant()
	if len(db.granted) != 2 || db.queued != 3 {
		t.Fatalf("granted %d with 2 allowed, %d left queued", len(db.granted), db.queued)
	}
	if ok, _ := p.TrySchedule(); ok {
		t.Fatal("TrySchedule granted a third compaction with 2 allowed")
	}
	db.granted[0].Done()
	if len(db.granted) != 3 || db.queued != 2 {
		t.Fatalf("after one ended: %d granted, %d queued; want the next granted", len(db.granted), db.queued)
	}
	db.queued = 0
	db.granted[1].Done()
	if ok, h := p.TrySchedule(); !ok {
		t.Fatal("TrySchedule refused with a slot free")
	} else {
		h.Done()
	}

	p.Unregister()
	db.queued = 1
	db.granted[2].Done()
	if ok, _ := p.TrySchedule(); ok || len(db.granted) != 3 {
		t.Fatalf("after Unregister: TrySchedule %v, %d granted (want 3: none new)", ok, len(db.granted))
	}
}

// TestCompactionsArePaced runs a real store: compactions are granted by
// the pacer and consult it as they work.
func TestCompactionsArePaced(t *testing.T) {
	var looks atomic.Int64
	compacted := make(chan struct{}, 1)
	db, err := Open(WithTuning(InMemory(), func(o *pebble.Options) {
		o.MemTableSize = 256 << 10
		pacer := o.Experimental.CompactionScheduler.(*compactionPacer)
		pacer.work = 0 // look at every call
		pacer.waiting = func() bool { looks.Add(1); return false }
		o.EventListener.CompactionEnd = func(info pebble.CompactionInfo) {
			if info.Err == nil && looks.Load() > 0 {
				select {
				case compacted <- struct{}{}:
				default:
				}
			}
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := <-writeOverlapping(db, 40_000); err != nil {
		t.Fatal(err)
	}
	select {
	case <-compacted:
	case <-time.After(30 * time.Second):
		t.Fatalf("no paced compaction: %d compactions, %d looks", db.pdb.Metrics().Compact.Count, looks.Load())
	}
}

// TestWritesGoOnBesideLongCompaction holds one compaction as a long
// rewrite of the bottom level would be held (a 25 s compaction was seen
// under bench/bigbench) and keeps writing data that every flush stacks
// into L0: another compaction must start beside it and drain L0, so that
// writes never stop. With one compaction at a time, L0 reached its stop
// threshold and every write waited for the long one to end.
func TestWritesGoOnBesideLongCompaction(t *testing.T) {
	var (
		held    atomic.Bool // a compaction is held
		stalled = make(chan string, 1)
		ended   atomic.Int64 // compactions ended while one is held
	)
	db, free := openPaused(t, func(released <-chan struct{}) {
		if held.CompareAndSwap(false, true) {
			<-released
		}
	}, func(o *pebble.Options) {
		o.EventListener.CompactionEnd = func(info pebble.CompactionInfo) {
			if held.Load() && info.Err == nil {
				ended.Add(1)
			}
		}
		o.EventListener.WriteStallBegin = func(info pebble.WriteStallBeginInfo) {
			if !strings.HasPrefix(info.Reason, "L0") {
				return // memtables briefly ahead of their flushes
			}
			select {
			case stalled <- info.Reason:
			default:
			}
		}
	})

	wrote := writeOverlapping(db, 60_000)
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case reason := <-stalled:
		others := ended.Load()
		free()
		<-wrote // the writer must end before the store closes
		t.Fatalf("writes stopped (%s) while one compaction was held; %d others ended meanwhile", reason, others)
	case <-time.After(60 * time.Second):
		free()
		<-wrote
		t.Fatal("writes did not finish in 60 s")
	}
	if !held.Load() {
		t.Fatal("no compaction was held: the test proved nothing")
	}
	if ended.Load() == 0 {
		t.Fatal("no compaction ran beside the held one")
	}
}

// writeOverlapping writes n records in batches of one from a goroutine,
// over 5,000 keys again and again, so that every memtable flush overlaps
// all of L0 and stacks it up; the channel gets the first error, or nil
// once all are written.
func writeOverlapping(db *DB, n int) <-chan error {
	wrote := make(chan error, 1)
	go func() {
		value := make([]byte, 200)
		for i := range n {
			b := db.NewBatch()
			k := binary.BigEndian.AppendUint64([]byte{tagData}, uint64(i%5000))
			err := b.Set(k, value)
			if err == nil {
				err = b.Commit()
			}
			b.Close()
			if err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	return wrote
}

// openPaused opens an in-memory store with small memtables whose
// compactions call pause, with a channel that free closes, every time
// they pause (the pacer looks at every call and always finds goroutines
// waiting); tune, if not nil, then changes the options further. The holds
// end and the store closes when the test ends; the test must have waited
// for its writers by then.
func openPaused(t *testing.T, pause func(released <-chan struct{}), tune func(*pebble.Options)) (db *DB, free func()) {
	t.Helper()
	released := make(chan struct{})
	db, err := Open(WithTuning(InMemory(), func(o *pebble.Options) {
		o.MemTableSize = 256 << 10
		pacer := o.Experimental.CompactionScheduler.(*compactionPacer)
		pacer.work = 0
		pacer.waiting = func() bool { return true }
		pacer.sleep = func(time.Duration) { pause(released) }
		if tune != nil {
			tune(o)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	free = func() { once.Do(func() { close(released) }) }
	t.Cleanup(func() {
		free()
		db.Close()
	})
	return db, free
}
