package bridge

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/stream"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// lockedStore makes a fakeStore safe for the consumers' goroutines.
type lockedStore struct {
	mu sync.Mutex
	f  *fakeStore
}

func (s *lockedStore) add(name string, ms uint64, fields ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.f.add(name, ms, fields...)
}

func (s *lockedStore) State(name string) (stream.SeqState, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.State(name)
}

func (s *lockedStore) BySeq(name string, seq uint64) (stream.SeqEntry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.BySeq(name, seq)
}

func (s *lockedStore) NextBySubject(name string, from uint64, filter string) (stream.SeqEntry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.NextBySubject(name, from, filter)
}

func (s *lockedStore) LastBySubject(name string, filter string) (stream.SeqEntry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.LastBySubject(name, filter)
}

func (s *lockedStore) Streams(fn func([]byte)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Streams(fn)
}

// waitFor polls cond until it holds or the test's patience runs out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLeafKV runs nats.go's KV readers against the embedded bridge: the
// messages reach the client through the leaf with their stored subjects,
// a watcher gets an append at once, and a stopped watcher's consumer goes
// away with its subscription (LS-), and Close leaves no goroutine.
func TestLeafKV(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st := &lockedStore{f: &fakeStore{}}
	st.add("KV_cfg", 1700000000001, "subject", "$KV.cfg.color", "data", "blue")
	st.add("KV_cfg", 1700000000002, "subject", "$KV.cfg.size", "data", "L")
	st.add("KV_cfg", 1700000000003, "subject", "$KV.cfg.color", "data", "red")
	st.add("KV_cfg", 1700000000004, "subject", "$KV.cfg.gone", "data", "x")
	st.add("KV_cfg", 1700000000005, "subject", "$KV.cfg.gone", "KV-Operation", "DEL")
	b, err := Start(ctx, Config{Port: -1}, st)
	if err != nil {
		t.Fatal(err)
	}
	nc, kv := bindKV(t, ctx, b.URL(), "")

	h, err := kv.History(ctx, "color")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range h {
		got = append(got, e.Key()+"="+string(e.Value())+"@"+itoa(e.Revision()))
	}
	if want := []string{"color=blue@1", "color=red@3"}; !slices.Equal(got, want) {
		t.Errorf("History = %v, want %v", got, want)
	}
	keys, err := kv.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if want := []string{"color", "size"}; !slices.Equal(keys, want) {
		t.Errorf("Keys = %v, want %v", keys, want)
	}

	w, err := kv.WatchAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for e := range w.Updates() {
		if e == nil {
			break
		}
		got = append(got, e.Key()+"="+string(e.Value())+" "+e.Operation().String()+" delta "+itoa(e.Delta()))
	}
	if want := []string{"size=L KeyValuePutOp delta 2", "color=red KeyValuePutOp delta 1", "gone= KeyValueDeleteOp delta 0"}; !slices.Equal(got, want) {
		t.Errorf("WatchAll initial = %q, want %q", got, want)
	}
	st.add("KV_cfg", 1700000000006, "subject", "$KV.cfg.size", "data", "XL")
	b.Appended([]byte("KV_cfg"))
	select {
	case e := <-w.Updates():
		if e == nil || e.Key() != "size" || string(e.Value()) != "XL" || e.Revision() != 6 {
			t.Errorf("live update = %v", e)
		}
	case <-ctx.Done():
		t.Fatal("no live update")
	}

	// An ordered consumer that sees a delivery sequence out of order
	// recreates its consumer from the next stream sequence and deletes
	// the old one; the watcher goes on.
	old := findConsumer(b, func(*consumer) bool { return true })
	if old == nil {
		t.Fatal("no consumer behind the watcher")
	}
	// A client may not publish with a $JS.ACK reply; the leaf may.
	if err := b.leaf.publish(old.dsubj, []byte("$JS.ACK.KV_cfg."+old.name+".1.6.99.1700000000006000000.0"), nil, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ordered consumer to be recreated", func() bool {
		return findConsumer(b, func(c *consumer) bool { return c != old && c.cfg.OptStartSeq == 7 }) != nil
	})
	st.add("KV_cfg", 1700000000007, "subject", "$KV.cfg.color", "data", "white")
	b.Appended([]byte("KV_cfg"))
	select {
	case e := <-w.Updates():
		if e == nil || e.Key() != "color" || string(e.Value()) != "white" || e.Revision() != 7 {
			t.Errorf("update after reset = %v", e)
		}
	case <-ctx.Done():
		t.Fatal("no update after the reset")
	}
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "consumers to go with their subscriptions", func() bool { return b.api.cons.count() == 0 })

	// Close stops a consumer still in use.
	w, err = kv.WatchAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for e := range w.Updates() {
		if e == nil {
			break
		}
	}
	if n := b.api.cons.count(); n != 1 {
		t.Fatalf("%d consumers behind one watcher", n)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	cancel() // nats.go's subscriptions wait on their context
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func itoa(n uint64) string {
	return strconv.FormatUint(n, 10)
}

// findConsumer returns a consumer of the bridge that ok accepts.
func findConsumer(b *Bridge, ok func(*consumer) bool) *consumer {
	r := b.api.cons
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cs := range r.byStream {
		for _, c := range cs {
			if ok(c) {
				return c
			}
		}
	}
	return nil
}

// TestLeafExternal: joined to an existing server, the bridge serves
// consumers through Config.LeafURL, and without one refuses them with an
// error that says why.
func TestLeafExternal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts := &natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	user, pass := addLeafListener(opts)
	ns := startTestNATS(t, opts)
	st := &lockedStore{f: &fakeStore{}}
	st.add("KV_cfg", 1700000000001, "subject", "$KV.cfg.color", "data", "blue")
	for _, tc := range []struct {
		name, leafURL, wantErr string
	}{
		{"leaf", embeddedLeafURL(opts, user, pass), ""},
		{"no leaf", "", "push consumers are not available on this Eddy bridge: the bridge joined an existing NATS server without a leafnode URL"},
		{"leaf refused", embeddedLeafURL(opts, user, "wrong"), "push consumers are not available on this Eddy bridge: its leafnode connection failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Start(ctx, Config{URL: ns.ClientURL(), Domain: "eddy", Queue: strings.ReplaceAll(tc.name, " ", "-"), LeafURL: tc.leafURL}, st)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			nc, kv := bindKV(t, ctx, ns.ClientURL(), "eddy")
			defer nc.Close()
			h, err := kv.History(ctx, "color")
			switch {
			case tc.wantErr == "" && (err != nil || len(h) != 1 || string(h[0].Value()) != "blue"):
				t.Errorf("History = %v, %v", h, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("History error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// bindKV connects to url and binds KV bucket cfg, under JetStream domain
// when it is not empty.
func bindKV(t *testing.T, ctx context.Context, url, domain string) (*nats.Conn, jetstream.KeyValue) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	var js jetstream.JetStream
	if domain == "" {
		js, err = jetstream.New(nc)
	} else {
		js, err = jetstream.NewWithDomain(nc, domain)
	}
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "cfg")
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	return nc, kv
}
