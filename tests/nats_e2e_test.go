package tests

import (
	"context"
	"net"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
)

// TestNATSJetStreamClient reads a Redis stream with nats.go's jetstream
// API, against the embedded server and against a separate nats-server
// (which runs JetStream of its own, so the bridge serves the "eddy"
// domain there).
func TestNATSJetStreamClient(t *testing.T) {
	external := startNATS(t, true)
	for _, tc := range []struct {
		name   string
		args   []string
		domain string
	}{
		{"embedded", nil, ""},
		{"external", []string{"--nats-port", "0", "--nats-url", external.ClientURL()}, "eddy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var eddy *eddyProc
			var url string
			if tc.domain == "" {
				eddy, url = startEddyNATS(t)
			} else {
				if againstRedis {
					t.Skip("the NATS bridge has no Redis counterpart")
				}
				eddy, url = startEddy(t, tc.args...), external.ClientURL()
				if got := eddyNatsURL(t, eddy); got != url {
					t.Errorf("bridge url %q, want %q", got, url)
				}
			}
			nc := natsConnect(t, url)
			var js jetstream.JetStream
			var err error
			if tc.domain == "" {
				js, err = jetstream.New(nc)
			} else {
				js, err = jetstream.NewWithDomain(nc, tc.domain)
			}
			if err != nil {
				t.Fatal(err)
			}
			// See which API subjects the client uses: a plain subscriber
			// receives requests without answering them.
			seen := make(chan string, 64)
			spy, err := nc.Subscribe("$JS.>", func(m *nats.Msg) { seen <- m.Subject })
			if err != nil {
				t.Fatal(err)
			}
			defer spy.Unsubscribe()
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}

			rc := eddy.Client()
			for _, e := range [][]any{
				{"subject", "orders.new", "data", "o1", "Trace-Id", "t1"},
				{"subject", "orders.paid", "data", "o2"},
				{"subject", "orders.new", "data", "o3"},
			} {
				if err := rc.XAdd(ctx, &redis.XAddArgs{Stream: "orders", Values: e}).Err(); err != nil {
					t.Fatal(err)
				}
			}

			s, err := js.Stream(ctx, "orders")
			if err != nil {
				t.Fatalf("js.Stream: %v", err)
			}
			info := s.CachedInfo()
			if !info.Config.AllowDirect || info.State.Msgs != 3 || info.State.LastSeq != 3 {
				t.Errorf("stream info: allow_direct=%v state=%+v", info.Config.AllowDirect, info.State)
			}
			m, err := s.GetMsg(ctx, 1)
			if err != nil || m.Subject != "orders.new" || string(m.Data) != "o1" || m.Sequence != 1 || m.Header.Get("Trace-Id") != "t1" {
				t.Errorf("GetMsg(1) = %+v, %v", m, err)
			}
			m, err = s.GetLastMsgForSubject(ctx, "orders.new")
			if err != nil || m.Sequence != 3 || string(m.Data) != "o3" {
				t.Errorf("GetLastMsgForSubject = %+v, %v", m, err)
			}
			// An entry is visible as soon as XADD has replied.
			if err := rc.XAdd(ctx, &redis.XAddArgs{Stream: "orders", Values: []any{"subject", "orders.paid", "data", "o4"}}).Err(); err != nil {
				t.Fatal(err)
			}
			m, err = s.GetLastMsgForSubject(ctx, "orders.paid")
			if err != nil || m.Sequence != 4 {
				t.Errorf("after XADD: %+v, %v", m, err)
			}
			if _, err := s.GetMsg(ctx, 99); err == nil {
				t.Error("GetMsg(99) found a message")
			}
			if _, err := js.Stream(ctx, "nosuch"); err != jetstream.ErrStreamNotFound {
				t.Errorf("missing stream: %v, want ErrStreamNotFound", err)
			}

			// KV: a KV_<bucket> stream with $KV.<bucket>.<key> subjects.
			if err := rc.XAdd(ctx, &redis.XAddArgs{Stream: "KV_cfg", Values: []any{"subject", "$KV.cfg.color", "data", "blue"}}).Err(); err != nil {
				t.Fatal(err)
			}
			kv, err := js.KeyValue(ctx, "cfg")
			if err != nil {
				t.Fatalf("KeyValue: %v", err)
			}
			e, err := kv.Get(ctx, "color")
			if err != nil || string(e.Value()) != "blue" || e.Revision() != 1 {
				t.Errorf("kv.Get = %v, %v", e, err)
			}

			// The client took the Direct Get path on its own.
			prefix := "$JS.API.DIRECT.GET.orders"
			if tc.domain != "" {
				prefix = "$JS." + tc.domain + ".API.DIRECT.GET.orders"
			}
			timeout := time.After(5 * time.Second)
			for direct := false; !direct; {
				select {
				case subj := <-seen:
					direct = strings.HasPrefix(subj, prefix)
				case <-timeout:
					t.Fatalf("no request on %s…: the client did not use Direct Get", prefix)
				}
			}
		})
	}
}

// TestNATSBind checks that nats-bind chooses the embedded server's
// address: bound to 127.0.0.2, it answers there and not on 127.0.0.1.
func TestNATSBind(t *testing.T) {
	_, url := startEddyNATS(t, "--nats-bind", "127.0.0.2")
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.2" {
		t.Fatalf("bridge URL %s, want host 127.0.0.2", url)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatalf("dial %s: %v", u.Host, err)
	}
	c.Close()
	if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", u.Port())); err == nil {
		c.Close()
		t.Fatalf("the embedded NATS server also answers on 127.0.0.1:%s", u.Port())
	}
}
