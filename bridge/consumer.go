package bridge

import (
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eddy-streams/eddy/stream"
	"github.com/nats-io/nats-server/v2/server"
)

// Ephemeral push consumers, as nats.go's ordered consumer creates them
// (kv.History, kv.Keys, kv.Watch): ack none, delivered to a deliver
// inbox, the stream read from a sequence on. One goroutine per consumer
// reads the Store and publishes through the leaf (leaf.go), so the
// subscriber sees each message under its stored subject with the
// "$JS.ACK.<stream>.<consumer>.1.<sseq>.<dseq>.<ns>.<pending>" reply that
// carries revision, time and pending to the client.
//
// A consumer lives until CONSUMER.DELETE, until its deliver inbox has had
// no subscriber (LS- on the leaf) for inactive_threshold, until its
// stream is gone, or until Close. Like nats-server, it does not die the
// moment its subscriber leaves: nats.go unsubscribes and then deletes
// the consumer, and expects the delete to succeed.
// Durable, pull, acknowledged, queue-group and start-time consumers are
// refused with a JSON error.

// publisher is where consumers' messages go: the leaf, or a recorder in
// tests.
type publisher interface {
	// publish sends one message to subject; reply may be "". hdr, when
	// not empty, is a complete header block. errTooBig: not sent.
	publish(subject string, reply, hdr, data []byte) error
	// hasInterest reports whether subject has a subscriber.
	hasInterest(subject string) bool
}

// Defaults nats-server applies to ephemeral consumers.
const (
	defaultInactive = 5 * time.Second // JsDeleteWaitTimeDefault
	// pollEvery re-reads the store when no append woke a consumer: a
	// safety net for writes the hook does not report, and the period of
	// the interest check.
	pollEvery = time.Second
	// maxConsumers bounds the goroutines clients can start; the server's
	// own default is no limit, but each of these reads the store.
	maxConsumers = 10000
	// readAhead is how many entries one store scan reads for delivery.
	readAhead = 256
)

// errStreamGone: the stream was deleted (or recreated) under a consumer.
var errStreamGone = errors.New("stream deleted")

// consumers is the registry of live consumers.
type consumers struct {
	store Store
	pub   publisher // nil: no leaf, consumers are refused
	noPub string    // why pub is nil
	log   *slog.Logger
	now   func() time.Time
	poll  time.Duration
	// inactive is the inactive_threshold of consumers created without one.
	inactive time.Duration

	mu       sync.Mutex
	byStream map[string]map[string]*consumer // guarded by mu: stream, name
	closed   bool                            // guarded by mu
	wg       sync.WaitGroup
	// streams is len(byStream), written under mu: appended reads it
	// without the lock, and with no consumer (the usual case) every
	// XADD's call costs one atomic load.
	streams atomic.Int32
}

func newConsumers(store Store, pub publisher, log *slog.Logger) *consumers {
	return &consumers{
		store: store, pub: pub, log: log, now: time.Now, poll: pollEvery, inactive: defaultInactive,
		byStream: make(map[string]map[string]*consumer),
	}
}

// appended wakes the consumers of stream key; it runs on the engine's
// commit path, so it only signals.
func (r *consumers) appended(key []byte) {
	if r.streams.Load() == 0 {
		return
	}
	r.mu.Lock()
	for _, c := range r.byStream[string(key)] {
		c.signal()
	}
	r.mu.Unlock()
}

// add registers c and starts it; false when the name is taken or the
// registry is closed.
func (r *consumers) add(c *consumer) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.byStream[c.stream][c.name] != nil || r.countLocked() >= maxConsumers {
		return false
	}
	cs := r.byStream[c.stream]
	if cs == nil {
		cs = make(map[string]*consumer)
		r.byStream[c.stream] = cs
		r.streams.Store(int32(len(r.byStream)))
	}
	cs[c.name] = c
	r.wg.Add(1)
	go c.run()
	return true
}

func (r *consumers) lookup(streamName, name string) *consumer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byStream[streamName][name]
}

// remove unregisters c (run calls it as it exits).
func (r *consumers) remove(c *consumer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cs := r.byStream[c.stream]; cs[c.name] == c {
		delete(cs, c.name)
		if len(cs) == 0 {
			delete(r.byStream, c.stream)
			r.streams.Store(int32(len(r.byStream)))
		}
	}
}

// count is the number of live consumers.
func (r *consumers) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.countLocked()
}

func (r *consumers) countLocked() int {
	n := 0
	for _, cs := range r.byStream {
		n += len(cs)
	}
	return n
}

// close stops every consumer and waits for their goroutines.
func (r *consumers) close() {
	r.mu.Lock()
	r.closed = true
	for _, cs := range r.byStream {
		for _, c := range cs {
			c.halt()
		}
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// consumer is one ephemeral push consumer. Its delivery state is touched
// by its own goroutine and by CONSUMER.INFO, under mu.
type consumer struct {
	r           *consumers
	stream      string
	name        string
	dsubj       string
	filters     []string // nil: every subject
	headersOnly bool
	hb          time.Duration
	inactive    time.Duration
	poll        time.Duration
	created     time.Time
	cfg         server.ConsumerConfig // as reported

	wake     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once

	mu     sync.Mutex
	sseq   uint64    // guarded by mu: next stream sequence to read (after lss)
	dseq   uint64    // guarded by mu: next delivery sequence
	npc    int64     // guarded by mu: messages still to deliver
	npf    uint64    // guarded by mu: npc counts messages up to this sequence
	lss    []uint64  // guarded by mu: last per subject, still to deliver
	resume uint64    // guarded by mu: the stream's last sequence when lss was taken
	active time.Time // guarded by mu: time of the last delivery
	// ahead holds entries read ahead of delivery, in sequence order (of
	// lss while it lasts): one scan instead of a read per message.
	ahead []stream.SeqEntry // guarded by mu
	// reply and hdr are deliverLocked's scratch for a message's reply
	// subject and header, which publish copies out.
	reply, hdr []byte // guarded by mu
}

func (c *consumer) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *consumer) halt() { c.stopOnce.Do(func() { close(c.stop) }) }

func (c *consumer) matches(subject []byte) bool {
	if len(c.filters) == 0 {
		return true
	}
	for _, f := range c.filters {
		if subjectMatches(f, subject) {
			return true
		}
	}
	return false
}

// nextLocked returns the first live matching entry at or after sseq. A
// single literal filter uses the store's subject index; otherwise one
// scan in sequence order reads up to readAhead matching entries.
func (c *consumer) nextLocked() (stream.SeqEntry, bool, error) {
	if len(c.filters) == 1 && !subjectHasWildcard(c.filters[0]) {
		return c.r.store.NextBySubject(c.stream, c.sseq, c.filters[0])
	}
	if len(c.ahead) == 0 {
		err := c.r.store.Scan(c.stream, c.sseq, func(e stream.SeqEntry) bool {
			if c.matches(e.Subject) {
				c.ahead = append(c.ahead, e)
			}
			return len(c.ahead) < readAhead
		})
		if err != nil {
			c.ahead = c.ahead[:0]
			return stream.SeqEntry{}, false, err
		}
	}
	if len(c.ahead) == 0 {
		return stream.SeqEntry{}, false, nil
	}
	e := c.ahead[0]
	c.ahead = dropFirst(c.ahead)
	return e, true, nil
}

// dropFirst pops the read-ahead buffer; emptied, it lets go of the
// entries, which an idle consumer would otherwise hold.
func dropFirst(ahead []stream.SeqEntry) []stream.SeqEntry {
	if len(ahead) <= 1 {
		return nil
	}
	return ahead[1:]
}

// countRange counts matching live entries with sequences in [from, to].
func (c *consumer) countRange(from, to uint64) (int64, error) {
	var n int64
	if from > to {
		return 0, nil
	}
	err := c.r.store.Scan(c.stream, from, func(e stream.SeqEntry) bool {
		if e.Seq > to {
			return false
		}
		if c.matches(e.Subject) {
			n++
		}
		return true
	})
	return n, err
}

// lastPerSubject returns the sequence of the last matching entry of each
// subject up to st.LastSeq, ascending.
func (c *consumer) lastPerSubject(st stream.SeqState) ([]uint64, error) {
	if seqs, ok, err := c.lastPerSubjectIndexed(st); err != nil || ok {
		return seqs, err
	}
	return c.lastPerSubjectWalk(st)
}

// lastPerSubjectWalk is lastPerSubject by reading every entry.
func (c *consumer) lastPerSubjectWalk(st stream.SeqState) ([]uint64, error) {
	last := make(map[string]uint64)
	err := c.r.store.Scan(c.stream, st.FirstSeq, func(e stream.SeqEntry) bool {
		if e.Seq > st.LastSeq {
			return false
		}
		if c.matches(e.Subject) {
			last[string(e.Subject)] = e.Seq
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	seqs := make([]uint64, 0, len(last))
	for _, s := range last {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	return seqs, nil
}

// maxIndexedSubjects is the most subjects lastPerSubjectIndexed looks up
// one by one; a stream with more is walked.
const maxIndexedSubjects = 100000

// lastPerSubjectIndexed is lastPerSubject with a lookup per subject
// instead of a walk of every entry, when the store lists the subjects
// cheaply (a KV bucket's subject index): a bucket of 10,000 keys kept to
// 64 revisions is 10,000 lookups, not 640,000 entries read. ok is false
// when it cannot answer: too many subjects, a subject with wildcard
// characters (a lookup would take it for a filter), or an entry appended
// since st, which the walk leaves out.
func (c *consumer) lastPerSubjectIndexed(st stream.SeqState) (seqs []uint64, ok bool, err error) {
	subjects, complete, err := c.r.store.Subjects(c.stream, maxIndexedSubjects)
	if err != nil || !complete {
		return nil, false, err
	}
	for _, subject := range subjects {
		if !c.matches([]byte(subject)) {
			continue
		}
		if strings.ContainsAny(subject, "*>") {
			return nil, false, nil
		}
		e, found, err := c.r.store.LastBySubject(c.stream, subject)
		switch {
		case err != nil:
			return nil, false, err
		case !found:
			continue // deleted since the listing
		case e.Seq > st.LastSeq:
			return nil, false, nil
		}
		seqs = append(seqs, e.Seq)
	}
	slices.Sort(seqs)
	return seqs, true, nil
}

// start picks the first sequence and counts what is pending, as
// nats-server's selectStartingSeqNo and calculateNumPending do.
func (c *consumer) start(st stream.SeqState) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	// JetStream's first sequence is 0 for a stream that never had a
	// message; Eddy's SeqState says 1.
	first := st.FirstSeq
	if st.LastSeq == 0 {
		first = 0
	}
	opt := c.cfg.OptStartSeq
	lps := false
	switch c.cfg.DeliverPolicy {
	case server.DeliverAll:
		c.sseq = first
	case server.DeliverLast:
		c.sseq = st.LastSeq
		if len(c.filters) > 0 {
			c.sseq = 0
			for _, f := range c.filters {
				e, ok, err := c.r.store.LastBySubject(c.stream, f)
				if err != nil {
					return err
				}
				if ok && e.Seq > c.sseq {
					c.sseq = e.Seq
				}
			}
		}
	case server.DeliverLastPerSubject:
		seqs, err := c.lastPerSubject(st)
		if err != nil {
			return err
		}
		if len(seqs) == 0 {
			c.sseq = st.LastSeq
		} else {
			c.sseq = seqs[0]
			c.lss, c.resume, lps = seqs, st.LastSeq, true
		}
	case server.DeliverNew:
		c.sseq = st.LastSeq + 1
	case server.DeliverByStartSequence:
		c.sseq = opt
	}
	switch {
	case first == 0 && opt == 0:
		c.sseq = 1
	case c.sseq > st.LastSeq && opt == 0:
		c.sseq = st.LastSeq + 1
	case c.sseq < first:
		c.sseq = first
	}
	c.dseq = 1
	c.npf = st.LastSeq
	if lps {
		c.npc = int64(len(c.lss))
		return nil
	}
	n, err := c.countRange(c.sseq, st.LastSeq)
	c.npc = n
	return err
}

// step delivers the next message, if any; false when there is none.
func (c *consumer) step() (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.lss) > 0 {
		seq := c.lss[0]
		c.lss = c.lss[1:]
		c.sseq = seq + 1
		if len(c.lss) == 0 {
			c.sseq = c.resume + 1
		}
		if len(c.ahead) == 0 {
			// The next of the list, in one scan: it stops at readAhead.
			want := append([]uint64{seq}, c.lss[:min(len(c.lss), readAhead-1)]...)
			i, last := 0, want[len(want)-1]
			err := c.r.store.Scan(c.stream, seq, func(e stream.SeqEntry) bool {
				for i < len(want) && want[i] < e.Seq {
					i++
				}
				if i < len(want) && want[i] == e.Seq {
					c.ahead = append(c.ahead, e)
				}
				return e.Seq < last && len(c.ahead) < readAhead
			})
			if err != nil {
				c.ahead = c.ahead[:0]
				return false, err
			}
		}
		c.npc = max(c.npc-1, 0)
		if len(c.ahead) > 0 && c.ahead[0].Seq == seq {
			e := c.ahead[0]
			c.ahead = dropFirst(c.ahead)
			c.deliverLocked(e)
		} // else deleted since the list was taken
		return true, nil
	}
	e, ok, err := c.nextLocked()
	if err != nil {
		return false, err
	}
	if !ok {
		// What npc still counts was deleted; the real server also
		// moves its start past the end of the stream here.
		c.npc = 0
		c.sseq = max(c.sseq, c.npf+1)
		_, err := c.checkStreamLocked()
		return false, err
	}
	if e.Seq > c.npf {
		// Appended since the last count: count the new ones, as the
		// server counts each append that matches.
		st, err := c.checkStreamLocked()
		if err != nil {
			return false, err
		}
		n, err := c.countRange(c.npf+1, st.LastSeq)
		if err != nil {
			return false, err
		}
		c.npc += n
		c.npf = st.LastSeq
	}
	c.sseq = e.Seq + 1
	c.npc = max(c.npc-1, 0)
	c.deliverLocked(e)
	return true, nil
}

// checkStreamLocked notices a stream deleted (or deleted and recreated,
// which restarts its sequences) under the consumer, and returns the
// stream's state otherwise.
func (c *consumer) checkStreamLocked() (stream.SeqState, error) {
	st, ok, err := c.r.store.State(c.stream)
	if err != nil {
		return st, err
	}
	if !ok || st.LastSeq < c.npf {
		return st, errStreamGone
	}
	return st, nil
}

// deliverLocked publishes e with the next delivery sequence and the
// current pending count.
func (c *consumer) deliverLocked(e stream.SeqEntry) {
	reply := append(c.reply[:0], "$JS.ACK."...)
	reply = append(reply, c.stream...)
	reply = append(reply, '.')
	reply = append(reply, c.name...)
	reply = append(reply, ".1."...)
	reply = strconv.AppendUint(reply, e.Seq, 10)
	reply = append(reply, '.')
	reply = strconv.AppendUint(reply, c.dseq, 10)
	reply = append(reply, '.')
	reply = strconv.AppendInt(reply, entryTime(e).UnixNano(), 10)
	reply = append(reply, '.')
	reply = strconv.AppendInt(reply, c.npc, 10)
	reply = append(reply, '@')
	reply = append(reply, deliverSubject(c.stream, e)...)
	data := payload(e)
	hdr := appendEntryHeader(c.hdr[:0], e)
	if c.headersOnly {
		hdr = appendHeadersOnly(hdr, len(data))
		data = nil
	}
	c.reply, c.hdr = reply, hdr
	err := c.r.pub.publish(c.dsubj, reply, hdr, data)
	switch {
	case errors.Is(err, errTooBig):
		// JetStream could not have stored it; skipping keeps the
		// delivery sequence without a gap the client would reset on.
		c.r.log.Warn("nats bridge: entry too large for a NATS message, not delivered",
			"stream", c.stream, "seq", e.Seq, "consumer", c.name)
		return
	case err != nil:
		// The leaf is down: the client sees a gap or misses heartbeats
		// and recreates the consumer.
		c.r.log.Debug("nats bridge: consumer delivery failed", "consumer", c.name, "err", err)
	}
	c.dseq++
	c.active = c.r.now()
}

// deliverSubject is the subject the subscriber sees: the stored one,
// unless it cannot travel in a protocol line.
func deliverSubject(name string, e stream.SeqEntry) []byte {
	if len(e.Subject) == 0 {
		return []byte(name)
	}
	for _, b := range e.Subject {
		if b <= ' ' || b == 0x7f {
			return []byte(name)
		}
	}
	return e.Subject
}

// appendHeadersOnly turns a stored header block (or none) into a
// headers_only delivery's, as convertToHeadersOnly does.
func appendHeadersOnly(hdr []byte, size int) []byte {
	if len(hdr) == 0 {
		hdr = append(hdr, "NATS/1.0\r\n"...)
	} else {
		hdr = hdr[:len(hdr)-2]
	}
	hdr = append(hdr, "Nats-Msg-Size: "...)
	hdr = strconv.AppendInt(hdr, int64(size), 10)
	return append(hdr, "\r\n\r\n"...)
}

// heartbeat sends the idle heartbeat with the last delivered sequences.
func (c *consumer) heartbeat() {
	c.mu.Lock()
	hdr := idleHeartbeat(c.dseq-1, c.sseq-1)
	c.mu.Unlock()
	if err := c.r.pub.publish(c.dsubj, nil, hdr, nil); err != nil {
		c.r.log.Debug("nats bridge: heartbeat failed", "consumer", c.name, "err", err)
	}
}

// run delivers until the consumer is stopped or its stream is gone.
func (c *consumer) run() {
	defer c.r.wg.Done()
	defer c.r.remove(c)
	poll := time.NewTicker(c.poll)
	defer poll.Stop()
	var hbC <-chan time.Time
	var hb *time.Timer
	if c.hb > 0 {
		hb = time.NewTimer(c.hb)
		defer hb.Stop()
		hbC = hb.C
	}
	lastInterest := c.r.now()
	checkInterest := func() bool {
		now := c.r.now()
		if c.r.pub.hasInterest(c.dsubj) {
			lastInterest = now
			return true
		}
		return now.Sub(lastInterest) < c.inactive
	}
	for {
		delivered := false
		for {
			select {
			case <-c.stop:
				return
			default:
			}
			more, err := c.step()
			if errors.Is(err, errStreamGone) {
				c.r.log.Debug("nats bridge: consumer's stream is gone", "stream", c.stream, "consumer", c.name)
				return
			}
			if err != nil {
				c.r.log.Error("nats bridge: consumer read failed", "stream", c.stream, "consumer", c.name, "err", err)
				break
			}
			if !more {
				break
			}
			delivered = true
		}
		if delivered && hb != nil {
			hb.Reset(c.hb)
		}
		select {
		case <-c.stop:
			return
		case <-c.wake:
		case <-poll.C:
			if !checkInterest() {
				return
			}
		case <-hbC:
			if !checkInterest() {
				return
			}
			c.heartbeat()
			hb.Reset(c.hb)
		}
	}
}

// info is CONSUMER.INFO's (and CONSUMER.CREATE's) view of the consumer.
func (c *consumer) info(now time.Time) *server.ConsumerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	cfg := c.cfg
	cfg.Metadata = make(map[string]string, len(c.cfg.Metadata)+2)
	for k, v := range c.cfg.Metadata {
		cfg.Metadata[k] = v
	}
	cfg.Metadata[server.JSServerVersionMetadataKey] = server.VERSION
	cfg.Metadata[server.JSServerLevelMetadataKey] = strconv.Itoa(server.JSApiLevel)
	sseq := max(c.sseq, 1)
	if len(c.lss) > 0 {
		sseq = max(c.lss[0], 1)
	}
	done := server.SequenceInfo{Consumer: c.dseq - 1, Stream: sseq - 1}
	delivered := done
	if !c.active.IsZero() {
		t := c.active.UTC()
		delivered.Last = &t
	}
	return &server.ConsumerInfo{
		Stream:     c.stream,
		Name:       c.name,
		Created:    c.created,
		Config:     &cfg,
		Delivered:  delivered,
		AckFloor:   done,
		NumPending: uint64(max(c.npc, 0)),
		PushBound:  true,
		TimeStamp:  now.UTC(),
	}
}
