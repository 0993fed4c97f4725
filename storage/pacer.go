package storage

import (
	"runtime/metrics"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Compaction pacing.
//
// On a machine with few CPUs a compaction occupies one of the Go
// scheduler's slots (Ps) for as long as it runs: Go preempts a running
// goroutine only after 10 ms, and when every slot is busy the network
// poller is consulted only by the runtime's monitor, also every 10 ms, or
// when a slot runs out of work. A request arriving then waits for up to
// that long behind background work: with two CPUs, XRANGE of the oldest
// 100 entries of a long stream under heavy writes (bench/bigbench) had a
// p99 far above its p50.
//
// So a compaction pauses: after every 2 ms of work it looks whether
// goroutines are waiting for a slot (runtime/metrics) and, if any are,
// sleeps 50 µs. Its slot then runs what waits and, once it runs dry, polls
// the network. When nothing waits it does not pause, so a store that only
// compacts (eddy compact, a quiet server) runs at full speed; a paused
// compaction may be away for a millisecond, the resolution of Go's timers
// on an idle slot. Measured on the same stream, alternating builds, the
// XRANGE p99 fell, the writers got more done, and
// a pipelined load took as long as before; looking every millisecond
// did no better and slowed the writers in some rounds
// (bench/results/HISTORY.md, "Pebble settings" and "Figures that stood in
// code comments").
//
// Pebble offers the hook for this: a CompactionScheduler hands each
// compaction a grant handle whose CumulativeStats the compaction calls
// every 128 keys and which may block to slow the compaction down. Pebble's
// own scheduler (a concurrency limit) cannot be wrapped, since it is not
// exported, so compactionPacer also does what it does: it grants as many
// compactions as the DB allows without permission, on request, when one
// ends, and every 100 ms. Flushes do not go through a scheduler and are not
// paced; they are short (8 MB memtables).
type compactionPacer struct {
	work  time.Duration // compaction time between looks
	pause time.Duration // sleep when goroutines wait for a slot
	// waiting reports whether goroutines wait for a slot, sleep sleeps;
	// tests replace them.
	waiting func() bool
	sleep   func(time.Duration)

	db pebble.DBForCompaction // set by Register, before any other call

	mu      sync.Mutex
	running int  // guarded by mu: compactions granted and not done
	closed  bool // guarded by mu: Unregister was called

	// granting is held while compactions are granted, so that grants
	// from Done and from the granter goroutine do not overshoot the
	// limit together, and so that Unregister can wait for a grant in
	// flight. Ordered before mu.
	granting sync.Mutex

	poke chan struct{} // asks the granter goroutine to grant now
	stop chan struct{} // closed by Unregister
	done chan struct{} // closed when the granter goroutine has returned
}

// Pacing parameters (see above). Looking costs one runtime/metrics read
// (a fraction of a microsecond, under the scheduler's lock, and one small
// allocation) per 2 ms of compaction.
const (
	paceWork  = 2 * time.Millisecond
	pacePause = 50 * time.Microsecond
	// grantEvery is how often the DB is asked for compactions even when
	// none ended, as Pebble's own scheduler does: the DB's allowance
	// grows with its compaction debt.
	grantEvery = 100 * time.Millisecond
)

func newCompactionPacer() *compactionPacer {
	return &compactionPacer{
		work:    paceWork,
		pause:   pacePause,
		waiting: goroutinesWaiting,
		sleep:   time.Sleep,
		poke:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// goroutinesWaiting reports whether any goroutine is runnable but not
// running.
func goroutinesWaiting() bool {
	s := [1]metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}
	metrics.Read(s[:])
	return s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > 0
}

var _ pebble.CompactionScheduler = (*compactionPacer)(nil)

// Register implements pebble.CompactionScheduler.
func (p *compactionPacer) Register(_ int, db pebble.DBForCompaction) {
	p.db = db
	go p.granter()
}

// Unregister implements pebble.CompactionScheduler: once it returns, no
// compaction is granted any more.
func (p *compactionPacer) Unregister() {
	close(p.stop)
	<-p.done
	// Holding granting waits for a grant begun by Done to end; once
	// closed is set, none begins.
	p.granting.Lock()
	defer p.granting.Unlock()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// TrySchedule implements pebble.CompactionScheduler. The DB calls it with
// its mutex held; p.mu is ordered after it.
func (p *compactionPacer) TrySchedule() (bool, pebble.CompactionGrantHandle) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.running >= p.db.GetAllowedWithoutPermission() {
		return false, nil
	}
	p.running++
	return true, &pacedCompaction{p: p}
}

// UpdateGetAllowedWithoutPermission implements pebble.CompactionScheduler.
func (p *compactionPacer) UpdateGetAllowedWithoutPermission() {
	select {
	case p.poke <- struct{}{}:
	default:
	}
}

func (p *compactionPacer) granter() {
	defer close(p.done)
	t := time.NewTicker(grantEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		case <-p.poke:
		}
		p.grant()
	}
}

// grant starts waiting compactions while the DB allows more. It holds no
// lock of p's while it calls the DB, which may call TrySchedule.
func (p *compactionPacer) grant() {
	p.granting.Lock()
	defer p.granting.Unlock()
	for {
		p.mu.Lock()
		room := !p.closed && p.running < p.db.GetAllowedWithoutPermission()
		if room {
			p.running++
		}
		p.mu.Unlock()
		if !room {
			return
		}
		if waiting, _ := p.db.GetWaitingCompaction(); !waiting || !p.db.Schedule(&pacedCompaction{p: p}) {
			p.release()
			return
		}
	}
}

func (p *compactionPacer) release() {
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
}

// pacedCompaction is the grant handle of one compaction.
type pacedCompaction struct {
	p     *compactionPacer
	since time.Time // when the compaction last started working
}

// Started implements pebble.CompactionGrantHandle.
func (c *pacedCompaction) Started() { c.since = time.Now() }

// MeasureCPU implements pebble.CompactionGrantHandle.
func (c *pacedCompaction) MeasureCPU(pebble.CompactionGoroutineKind) {}

// CumulativeStats implements pebble.CompactionGrantHandle. The compaction's
// own goroutine calls it every 128 keys: this is where it pauses.
func (c *pacedCompaction) CumulativeStats(pebble.CompactionGrantHandleStats) {
	now := time.Now()
	if now.Sub(c.since) < c.p.work {
		return
	}
	c.since = now
	if c.p.waiting() {
		c.p.sleep(c.p.pause)
		c.since = time.Now()
	}
}

// Done implements pebble.CompactionGrantHandle. Pebble calls it without
// holding its mutex, so the next compaction may be granted here.
func (c *pacedCompaction) Done() {
	c.p.release()
	c.p.grant()
}
