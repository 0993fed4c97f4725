package bridge

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestBridgeOverNATS drives the bridge through its embedded server: a
// Direct Get answered on the read loop, a batch answered by a worker
// (several messages to one inbox), and a request whose reply subject is
// the bridge's own API, which must not stop it from answering.
func TestBridgeOverNATS(t *testing.T) {
	f := adrStore()
	for i := range 300 {
		f.add("big", uint64(i), "data", strings.Repeat("x", 1000))
	}
	b, err := Start(context.Background(), Config{Port: -1}, f)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	nc, err := nats.Connect(b.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	get := func() {
		t.Helper()
		m, err := nc.Request("$JS.API.DIRECT.GET.stream", []byte(`{"seq":2}`), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get("Nats-Sequence") != "2" || string(m.Data) != "m2" {
			t.Fatalf("direct get: %v %q", m.Header, m.Data)
		}
	}
	get()

	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("$JS.API.DIRECT.GET.stream", inbox, []byte(`{"seq":4,"batch":5}`)); err != nil {
		t.Fatal(err)
	}
	var seqs []string
	for {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("batch after %v: %v", seqs, err)
		}
		if m.Header.Get("Status") == "204" {
			break
		}
		seqs = append(seqs, m.Header.Get("Nats-Sequence"))
	}
	if len(seqs) != 3 || seqs[0] != "4" || seqs[2] != "6" {
		t.Errorf("batch from 4: sequences %v", seqs)
	}

	// Replies to the bridge's own subjects would come back to it, while
	// it writes: a burst larger than the server's read buffer would then
	// wait on itself.
	for _, reply := range []string{"$JS.API.INFO", "$JS.API.DIRECT.GET.stream"} {
		for _, req := range []string{`{"seq":1}`, `{"seq":1,"batch":300}`} {
			if err := nc.PublishRequest("$JS.API.DIRECT.GET.big", reply, []byte(req)); err != nil {
				t.Fatal(err)
			}
		}
	}
	get()
}

// TestBridgeRedials: the external server the bridge joined restarts; the
// bridge's client connection and its leafnode both dial again, so Direct
// Gets are answered and consumers deliver (kv.History) as before.
func TestBridgeRedials(t *testing.T) {
	opts := &natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	user, pass := addLeafListener(opts)
	ns := startTestNATS(t, opts)
	f := &lockedStore{f: adrStore()}
	f.add("KV_cfg", 1700000000001, "subject", "$KV.cfg.color", "data", "blue")
	b, err := Start(context.Background(), Config{URL: ns.ClientURL(), Domain: "eddy", LeafURL: embeddedLeafURL(opts, user, pass)}, f)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	// The restarted server listens where the first one did.
	restarted := *opts
	restarted.Port = ns.Addr().(*net.TCPAddr).Port
	ns.Shutdown()
	ns.WaitForShutdown()
	ns = startTestNATS(t, &restarted)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.NewWithDomain(nc, "eddy")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, err := nc.Request("$JS.eddy.API.DIRECT.GET.stream", []byte(`{"seq":2}`), time.Second)
		if err == nil && m.Header.Get("Nats-Sequence") == "2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Direct Get answer after the server restarted: %v", err)
		}
		// No responders is answered at once until the bridge has
		// redialled: poll, not spin.
		time.Sleep(10 * time.Millisecond)
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		var h []jetstream.KeyValueEntry
		kv, err := js.KeyValue(ctx, "cfg")
		if err == nil {
			h, err = kv.History(ctx, "color")
		}
		cancel()
		if err == nil && len(h) == 1 && string(h[0].Value()) == "blue" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no KV history through the leafnode after the server restarted: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startTestNATS runs a nats-server in process with opts, stopped when the
// test ends; nil opts is a plain server on a free port.
func startTestNATS(tb testing.TB, opts *natsserver.Options) *natsserver.Server {
	tb.Helper()
	if opts == nil {
		opts = &natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	}
	ns, err := natsserver.NewServer(opts)
	if err != nil {
		tb.Fatal(err)
	}
	ns.Start()
	tb.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(10 * time.Second) {
		tb.Fatal("nats-server did not start")
	}
	return ns
}
