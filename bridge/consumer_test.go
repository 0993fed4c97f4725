package bridge

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/stream"
	"github.com/nats-io/nats-server/v2/server"
)

// recPub records what consumers publish.
type recPub struct {
	mu       sync.Mutex
	msgs     []recMsg
	interest map[string]bool
	tooBig   int // payloads longer than this are refused; 0: no limit
}

type recMsg struct {
	subject, reply string
	hdr, data      []byte
}

func (p *recPub) publish(subject string, reply, hdr, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tooBig > 0 && len(hdr)+len(data) > p.tooBig {
		return errTooBig
	}
	p.msgs = append(p.msgs, recMsg{subject, string(reply), slices.Clone(hdr), slices.Clone(data)})
	return nil
}

func (p *recPub) hasInterest(subject string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.interest[subject]
}

func (p *recPub) taken() []recMsg {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.msgs)
}

// delivery renders a pushed message as "sseq/dseq/pending subject".
func delivery(m recMsg) string {
	ack, subject, _ := strings.Cut(m.reply, "@")
	t := strings.Split(ack, ".")
	if len(t) != 9 {
		return "bad reply " + m.reply
	}
	return t[5] + "/" + t[6] + "/" + t[8] + " " + subject
}

// kvTestStore: $KV.t.a, b, a, c.x, b at sequences 1-5.
func kvTestStore() *fakeStore {
	f := &fakeStore{}
	for i, k := range []string{"a", "b", "a", "c.x", "b"} {
		f.add("KV_t", 1700000000000+uint64(i), "subject", "$KV.t."+k, "data", fmt.Sprintf("v%d", i+1))
	}
	return f
}

func newTestConsumer(r *consumers, cfg server.ConsumerConfig) *consumer {
	filters := cfg.FilterSubjects
	if cfg.FilterSubject != "" {
		filters = []string{cfg.FilterSubject}
	}
	return &consumer{
		r: r, stream: "KV_t", name: "c1", dsubj: "_INBOX.d", filters: filters,
		headersOnly: cfg.HeadersOnly, hb: cfg.Heartbeat, inactive: defaultInactive, poll: time.Hour, cfg: cfg,
		wake: make(chan struct{}, 1), stop: make(chan struct{}),
	}
}

// TestConsumerPolicies starts consumers of every deliver policy and
// filter shape on one stream and checks the start, the pending count,
// and what they deliver, in order, with their pending counts.
func TestConsumerPolicies(t *testing.T) {
	const all, last, lps, news, bySeq = server.DeliverAll, server.DeliverLast, server.DeliverLastPerSubject, server.DeliverNew, server.DeliverByStartSequence
	for _, tc := range []struct {
		name      string
		policy    server.DeliverPolicy
		start     uint64
		filters   []string
		deleted   []uint64
		pending   uint64 // num_pending at creation
		delivered uint64 // delivered.stream_seq at creation
		want      []string
	}{
		{"all", all, 0, nil, nil, 5, 0, []string{"1/1/4 $KV.t.a", "2/2/3 $KV.t.b", "3/3/2 $KV.t.a", "4/4/1 $KV.t.c.x", "5/5/0 $KV.t.b"}},
		{"all >", all, 0, []string{">"}, nil, 5, 0, []string{"1/1/4 $KV.t.a", "2/2/3 $KV.t.b", "3/3/2 $KV.t.a", "4/4/1 $KV.t.c.x", "5/5/0 $KV.t.b"}},
		{"all literal", all, 0, []string{"$KV.t.a"}, nil, 2, 0, []string{"1/1/1 $KV.t.a", "3/2/0 $KV.t.a"}},
		{"all star", all, 0, []string{"$KV.t.*"}, nil, 4, 0, []string{"1/1/3 $KV.t.a", "2/2/2 $KV.t.b", "3/3/1 $KV.t.a", "5/4/0 $KV.t.b"}},
		{"all two filters", all, 0, []string{"$KV.t.a", "$KV.t.c.>"}, nil, 3, 0, []string{"1/1/2 $KV.t.a", "3/2/1 $KV.t.a", "4/3/0 $KV.t.c.x"}},
		{"all no match", all, 0, []string{"$KV.t.zz"}, nil, 0, 0, nil},
		{"all deleted skipped", all, 0, nil, []uint64{2}, 4, 0, []string{"1/1/3 $KV.t.a", "3/2/2 $KV.t.a", "4/3/1 $KV.t.c.x", "5/4/0 $KV.t.b"}},
		{"all first deleted", all, 0, nil, []uint64{1}, 4, 1, []string{"2/1/3 $KV.t.b", "3/2/2 $KV.t.a", "4/3/1 $KV.t.c.x", "5/4/0 $KV.t.b"}},
		{"last", last, 0, nil, nil, 1, 4, []string{"5/1/0 $KV.t.b"}},
		{"last literal", last, 0, []string{"$KV.t.a"}, nil, 1, 2, []string{"3/1/0 $KV.t.a"}},
		{"last per subject", lps, 0, []string{"$KV.t.>"}, nil, 3, 2, []string{"3/1/2 $KV.t.a", "4/2/1 $KV.t.c.x", "5/3/0 $KV.t.b"}},
		{"last per subject literal", lps, 0, []string{"$KV.t.b"}, nil, 1, 4, []string{"5/1/0 $KV.t.b"}},
		{"last per subject none", lps, 0, []string{"$KV.t.zz"}, nil, 0, 4, nil},
		{"new", news, 0, nil, nil, 0, 5, nil},
		{"by start sequence", bySeq, 3, nil, nil, 3, 2, []string{"3/1/2 $KV.t.a", "4/2/1 $KV.t.c.x", "5/3/0 $KV.t.b"}},
		{"by start sequence filtered", bySeq, 2, []string{"$KV.t.a"}, nil, 1, 1, []string{"3/1/0 $KV.t.a"}},
		{"by start sequence future", bySeq, 9, nil, nil, 0, 8, nil},
		{"by start sequence before first", bySeq, 1, nil, []uint64{1, 2}, 3, 2, []string{"3/1/2 $KV.t.a", "4/2/1 $KV.t.c.x", "5/3/0 $KV.t.b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := kvTestStore()
			f.streams["KV_t"] = slices.DeleteFunc(f.streams["KV_t"], func(e stream.SeqEntry) bool { return slices.Contains(tc.deleted, e.Seq) })
			pub := &recPub{}
			r := newConsumers(f, pub, slog.New(slog.DiscardHandler))
			cfg := server.ConsumerConfig{DeliverPolicy: tc.policy, OptStartSeq: tc.start, FilterSubjects: tc.filters}
			c := newTestConsumer(r, cfg)
			if len(tc.filters) == 1 && tc.filters[0] == ">" {
				c.filters = nil
			}
			st, _, _ := f.State("KV_t")
			if err := c.start(st); err != nil {
				t.Fatal(err)
			}
			info := c.info(time.Now())
			if info.NumPending != tc.pending || info.Delivered.Stream != tc.delivered || info.Delivered.Consumer != 0 {
				t.Errorf("at creation: num_pending %d delivered %+v, want %d and stream %d", info.NumPending, info.Delivered, tc.pending, tc.delivered)
			}
			for range 10 {
				more, err := c.step()
				if err != nil {
					t.Fatal(err)
				}
				if !more {
					break
				}
			}
			var got []string
			for _, m := range pub.taken() {
				got = append(got, delivery(m))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("delivered %q\nwant      %q", got, tc.want)
			}
			if n := c.info(time.Now()).NumPending; n != 0 {
				t.Errorf("num_pending %d after delivering everything", n)
			}
		})
	}
}

// TestConsumerLive: entries appended after creation are counted when
// found, so each delivery's pending says how many more there are now.
func TestConsumerLive(t *testing.T) {
	f := kvTestStore()
	pub := &recPub{}
	r := newConsumers(f, pub, slog.New(slog.DiscardHandler))
	c := newTestConsumer(r, server.ConsumerConfig{DeliverPolicy: server.DeliverLastPerSubject, FilterSubject: "$KV.t.*"})
	st, _, _ := f.State("KV_t")
	if err := c.start(st); err != nil {
		t.Fatal(err)
	}
	drain := func() {
		t.Helper()
		for {
			more, err := c.step()
			if err != nil {
				t.Fatal(err)
			}
			if !more {
				return
			}
		}
	}
	drain()
	f.add("KV_t", 1700000000010, "subject", "$KV.t.a", "data", "v6")
	f.add("KV_t", 1700000000011, "subject", "$KV.t.c.y", "data", "v7") // not matched
	f.add("KV_t", 1700000000012, "subject", "$KV.t.b", "data", "v8")
	drain()
	f.add("KV_t", 1700000000013, "subject", "$KV.t.a", "data", "v9")
	drain()
	var got []string
	for _, m := range pub.taken() {
		got = append(got, delivery(m))
	}
	want := []string{"3/1/1 $KV.t.a", "5/2/0 $KV.t.b", "6/3/1 $KV.t.a", "8/4/0 $KV.t.b", "9/5/0 $KV.t.a"}
	if !slices.Equal(got, want) {
		t.Errorf("delivered %q\nwant      %q", got, want)
	}
	if hb := string(idleHeartbeat(c.dseq-1, c.sseq-1)); hb != "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 5\r\nNats-Last-Stream: 9\r\n\r\n" {
		t.Errorf("heartbeat %q", hb)
	}
}

// TestConsumerMessages checks the pushed message itself: stored headers,
// payload, time stamp in the reply, headers_only, and an entry too large
// for NATS skipped without a gap in delivery sequences.
func TestConsumerMessages(t *testing.T) {
	f := &fakeStore{}
	f.add("KV_t", 1700000000001, "subject", "$KV.t.a", "data", "hello", "KV-Operation", "DEL")
	f.add("KV_t", 1700000000002, "subject", "$KV.t.b", "data", strings.Repeat("x", 100))
	f.add("KV_t", 1700000000003, "subject", "bad subject", "data", "v")
	f.add("KV_t", 1700000000004, "subject", "$KV.t.c")
	for _, tc := range []struct {
		headersOnly bool
		want        []recMsg
	}{
		{false, []recMsg{
			{"_INBOX.d", "$JS.ACK.KV_t.c1.1.1.1.1700000000001000000.3@$KV.t.a", []byte("NATS/1.0\r\nKV-Operation: DEL\r\n\r\n"), []byte("hello")},
			{"_INBOX.d", "$JS.ACK.KV_t.c1.1.3.2.1700000000003000000.1@KV_t", nil, []byte("v")},
			{"_INBOX.d", "$JS.ACK.KV_t.c1.1.4.3.1700000000004000000.0@$KV.t.c", nil, nil},
		}},
		{true, []recMsg{
			{"_INBOX.d", "$JS.ACK.KV_t.c1.1.1.1.1700000000001000000.3@$KV.t.a", []byte("NATS/1.0\r\nKV-Operation: DEL\r\nNats-Msg-Size: 5\r\n\r\n"), nil},
			{"_INBOX.d", "$JS.ACK.KV_t.c1.1.2.2.1700000000002000000.2@$KV.t.b", []byte("NATS/1.0\r\nNats-Msg-Size: 100\r\n\r\n"), nil},
			{"_INBOX.d", "$JS.ACK.KV_t.c1.1.3.3.1700000000003000000.1@KV_t", []byte("NATS/1.0\r\nNats-Msg-Size: 1\r\n\r\n"), nil},
			{"_INBOX.d", "$JS.ACK.KV_t.c1.1.4.4.1700000000004000000.0@$KV.t.c", []byte("NATS/1.0\r\nNats-Msg-Size: 0\r\n\r\n"), nil},
		}},
	} {
		pub := &recPub{tooBig: 64}
		r := newConsumers(f, pub, slog.New(slog.DiscardHandler))
		c := newTestConsumer(r, server.ConsumerConfig{DeliverPolicy: server.DeliverAll, HeadersOnly: tc.headersOnly})
		st, _, _ := f.State("KV_t")
		if err := c.start(st); err != nil {
			t.Fatal(err)
		}
		for more := true; more; {
			var err error
			if more, err = c.step(); err != nil {
				t.Fatal(err)
			}
		}
		got := pub.taken()
		if len(got) != len(tc.want) {
			t.Fatalf("headers_only %v: %d messages, want %d: %q", tc.headersOnly, len(got), len(tc.want), got)
		}
		for i := range got {
			g, w := got[i], tc.want[i]
			if g.subject != w.subject || g.reply != w.reply || string(g.hdr) != string(w.hdr) || string(g.data) != string(w.data) {
				t.Errorf("headers_only %v message %d:\ngot  %q %q %q %q\nwant %q %q %q %q", tc.headersOnly, i,
					g.subject, g.reply, g.hdr, g.data, w.subject, w.reply, w.hdr, w.data)
			}
		}
	}
}

// TestConsumerLifecycle runs consumers' goroutines: an append wakes one
// at once (the poll is an hour), an idle one sends heartbeats, one whose
// inbox loses its subscriber stops after its inactive threshold, as does
// one no one ever subscribed to, a deleted stream stops its consumers,
// and close waits for them all.
func TestConsumerLifecycle(t *testing.T) {
	st := &lockedStore{f: kvTestStore()}
	pub := &recPub{interest: map[string]bool{"_INBOX.d": true, "_INBOX.hb": true, "_INBOX.g": true}}
	r := newConsumers(st, pub, slog.New(slog.DiscardHandler))
	start := func(name, dsubj string, hb, inactive, poll time.Duration) *consumer {
		t.Helper()
		c := newTestConsumer(r, server.ConsumerConfig{DeliverPolicy: server.DeliverNew})
		c.name, c.dsubj, c.hb, c.inactive, c.poll = name, dsubj, hb, inactive, poll
		s, _, _ := st.State("KV_t")
		if err := c.start(s); err != nil {
			t.Fatal(err)
		}
		if !r.add(c) {
			t.Fatalf("add %s refused", name)
		}
		return c
	}
	count := func(subject, prefix string) int {
		n := 0
		for _, m := range pub.taken() {
			if m.subject == subject && strings.HasPrefix(string(m.hdr)+string(m.data), prefix) {
				n++
			}
		}
		return n
	}

	start("live", "_INBOX.d", 0, time.Hour, time.Hour)
	st.add("KV_t", 1700000000010, "subject", "$KV.t.a", "data", "new")
	r.appended([]byte("KV_t"))
	waitFor(t, "the append to be delivered", func() bool { return count("_INBOX.d", "new") == 1 })

	start("hb", "_INBOX.hb", 20*time.Millisecond, time.Hour, time.Hour)
	waitFor(t, "heartbeats", func() bool {
		return count("_INBOX.hb", "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 0\r\nNats-Last-Stream: 6\r\n") >= 2
	})

	dup := newTestConsumer(r, server.ConsumerConfig{})
	dup.name = "hb"
	if r.add(dup) {
		t.Error("a second consumer named hb was added")
	}

	start("gone", "_INBOX.g", 0, 50*time.Millisecond, 5*time.Millisecond)
	start("orphan", "_INBOX.nobody", 0, 50*time.Millisecond, 5*time.Millisecond)
	waitFor(t, "the never watched consumer to stop", func() bool { return r.lookup("KV_t", "orphan") == nil })
	if r.lookup("KV_t", "gone") == nil {
		t.Fatal("a consumer with a subscriber stopped")
	}
	pub.mu.Lock()
	pub.interest["_INBOX.g"] = false
	pub.mu.Unlock()
	waitFor(t, "the consumer that lost its subscriber to stop", func() bool { return r.lookup("KV_t", "gone") == nil })

	st.mu.Lock()
	delete(st.f.streams, "KV_t")
	st.mu.Unlock()
	r.appended([]byte("KV_t"))
	waitFor(t, "the deleted stream's consumers to stop", func() bool { return r.count() == 0 })

	start("last", "_INBOX.d", 0, time.Hour, time.Hour)
	r.close()
	if n := r.count(); n != 0 {
		t.Errorf("%d consumers after close", n)
	}
	if r.add(newTestConsumer(r, server.ConsumerConfig{})) {
		t.Error("a consumer was added after close")
	}
}

// TestLastPerSubjectIndexed: the lookup per subject gives what the walk
// gives, and steps aside (ok false) where a lookup would be wrong: a
// subject with wildcard characters, an entry appended since the state.
func TestLastPerSubjectIndexed(t *testing.T) {
	walk := func(f *fakeStore, c *consumer, st stream.SeqState) []uint64 {
		last := map[string]uint64{}
		for _, e := range f.streams["KV_t"] {
			if e.Seq <= st.LastSeq && c.matches(e.Subject) {
				last[string(e.Subject)] = e.Seq
			}
		}
		var seqs []uint64
		for _, s := range last {
			seqs = append(seqs, s)
		}
		slices.Sort(seqs)
		return seqs
	}
	for _, tc := range []struct {
		name      string
		subjects  []string // one entry each, in order
		filter    string
		appendNew bool // an entry added after the state is taken
		indexed   bool
	}{
		{"kv", []string{"$KV.t.a", "$KV.t.b", "$KV.t.a", "$KV.t.c.x", "$KV.t.b"}, "$KV.t.>", false, true},
		{"filtered", []string{"$KV.t.a", "$KV.t.b", "$KV.t.a", "$KV.t.c.x"}, "$KV.t.*", false, true},
		{"wildcard subject", []string{"$KV.t.a", "$KV.t.*", "$KV.t.a"}, "$KV.t.>", false, false},
		{"appended since", []string{"$KV.t.a", "$KV.t.b"}, "$KV.t.>", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeStore{}
			for i, s := range tc.subjects {
				f.add("KV_t", 1700000000000+uint64(i), "subject", s, "data", fmt.Sprint(i))
			}
			r := newConsumers(f, &recPub{}, slog.New(slog.DiscardHandler))
			c := newTestConsumer(r, server.ConsumerConfig{DeliverPolicy: server.DeliverLastPerSubject, FilterSubject: tc.filter})
			st, _, _ := f.State("KV_t")
			if tc.appendNew {
				f.add("KV_t", 1700000000100, "subject", "$KV.t.a", "data", "new")
			}
			_, ok, err := c.lastPerSubjectIndexed(st)
			if err != nil || ok != tc.indexed {
				t.Fatalf("lastPerSubjectIndexed: ok %v, err %v; want ok %v", ok, err, tc.indexed)
			}
			got, err := c.lastPerSubject(st)
			if want := walk(f, c, st); err != nil || !slices.Equal(got, want) {
				t.Fatalf("lastPerSubject = %v, %v; the walk gives %v", got, err, want)
			}
		})
	}
}
