package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Config says where the bridge's NATS is.
type Config struct {
	// URL of an existing NATS server to connect to; "" starts an
	// embedded server on Host:Port instead.
	URL   string
	Creds string // .creds file for URL, or ""
	// Domain is the JetStream domain to serve under ($JS.<domain>.API.…);
	// "" serves $JS.API.… directly.
	Domain string
	Host   string // embedded server address; "" is 127.0.0.1
	Port   int    // embedded server port; -1 picks a free one
	// Queue is the queue group every bridge on one NATS joins, so each
	// request is answered once; "" is "eddy".
	Queue  string
	Logger *slog.Logger
}

// Bridge serves a Store to NATS clients. Close stops it.
type Bridge struct {
	api     *api
	log     *slog.Logger
	ns      *server.Server // embedded server, or nil
	url     string
	conn    *conn
	work    chan request
	workers sync.WaitGroup

	// stopMu orders enqueue against Close: enqueue holds it shared while
	// it sends on work, Close exclusively while it sets stopping, so work
	// is never closed under a sender.
	stopMu   sync.RWMutex
	stopping bool // guarded by stopMu
	closeMu  sync.Once
}

// request is one message the read loop handed to the workers.
type request struct {
	subject, reply string
	data           []byte
}

// Start connects (or starts the embedded server and connects to it) and
// subscribes; the bridge answers requests when it returns.
func Start(ctx context.Context, cfg Config, store Store) (*Bridge, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	prefix := "$JS.API."
	if cfg.Domain != "" {
		prefix = "$JS." + cfg.Domain + ".API."
	}
	b := &Bridge{
		api:  &api{store: store, prefix: prefix, domain: cfg.Domain, log: log, now: time.Now},
		log:  log,
		work: make(chan request, 1024),
	}
	opts := connOptions{creds: cfg.Creds}
	if cfg.URL == "" {
		host := cfg.Host
		if host == "" {
			host = "127.0.0.1"
		}
		if cfg.Port > 0 {
			// nats-server reports a port it cannot bind only through its
			// logger; find out first, so the caller gets an error.
			ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(cfg.Port)))
			if err != nil {
				return nil, fmt.Errorf("nats server: %w", err)
			}
			ln.Close()
		}
		ns, err := server.NewServer(&server.Options{
			Host:      host,
			Port:      cfg.Port, // -1 is nats-server's "random port"
			NoLog:     true,
			NoSigs:    true,
			JetStream: false,
		})
		if err != nil {
			return nil, fmt.Errorf("nats server: %w", err)
		}
		ns.Start()
		if !ns.ReadyForConnections(10 * time.Second) {
			ns.Shutdown()
			return nil, fmt.Errorf("nats server: not listening on %s port %d", host, cfg.Port)
		}
		b.ns = ns
		b.url = ns.ClientURL()
		// In process: no TCP between the bridge and its own server.
		opts.dial = func(context.Context) (net.Conn, error) { return ns.InProcessConn() }
	} else {
		b.url = cfg.URL
	}
	u, err := url.Parse(b.url)
	if err != nil || u.Host == "" {
		b.shutdownServer()
		return nil, fmt.Errorf("nats url %q: not nats://host:port", cfg.URL)
	}
	opts.url = u
	queue := cfg.Queue
	if queue == "" {
		queue = "eddy"
	}
	for _, s := range b.api.subscriptions() {
		opts.subs = append(opts.subs, subscription{subject: s, queue: queue})
	}

	n := max(4, 4*runtime.GOMAXPROCS(0))
	b.workers.Add(n)
	for range n {
		go b.worker()
	}
	c, err := dialConn(ctx, opts, log, b.enqueue)
	if err != nil {
		close(b.work)
		b.workers.Wait()
		b.shutdownServer()
		return nil, fmt.Errorf("nats bridge: %w", err)
	}
	b.conn = c
	return b, nil
}

// URL is the NATS server clients should connect to; for the embedded
// server it carries the port actually bound.
func (b *Bridge) URL() string {
	u, err := url.Parse(b.url)
	if err != nil {
		return b.url
	}
	return u.Redacted()
}

// Port is the embedded server's port, 0 when connected elsewhere.
func (b *Bridge) Port() int {
	if b.ns == nil {
		return 0
	}
	if a, ok := b.ns.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

// enqueue runs on the connection's read loop: copy, hand over, return.
func (b *Bridge) enqueue(m *inMsg) {
	if m.reply == "" {
		return // a request nobody waits for: the server ignores it too
	}
	b.stopMu.RLock()
	defer b.stopMu.RUnlock()
	if b.stopping {
		return
	}
	b.work <- request{subject: m.subject, reply: m.reply, data: append([]byte(nil), m.data...)}
}

func (b *Bridge) worker() {
	defer b.workers.Done()
	for r := range b.work {
		hdr, data := b.api.serve(r.subject, r.data)
		if hdr == nil && data == nil {
			continue
		}
		b.conn.publish(r.reply, hdr, data)
	}
}

// Close stops answering, flushes replies in flight and, when embedded,
// shuts the NATS server down. The store is not read after it returns.
func (b *Bridge) Close() error {
	b.closeMu.Do(func() {
		// Requests already taken are answered; later ones are dropped
		// (another bridge in the queue group, or the client's retry,
		// gets them).
		b.stopMu.Lock()
		b.stopping = true
		b.stopMu.Unlock()
		close(b.work)
		b.workers.Wait()
		b.conn.close()
		b.shutdownServer()
	})
	return nil
}

func (b *Bridge) shutdownServer() {
	if b.ns != nil {
		b.ns.Shutdown()
		b.ns.WaitForShutdown()
	}
}
