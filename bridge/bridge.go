package bridge

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"strings"
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
	Queue string
	// LeafURL is a leafnode listener of URL's server (nats://user:pass@host:7422)
	// the bridge publishes push consumers' messages through; "" with URL
	// refuses consumer creation. The embedded server gets its own.
	LeafURL string
	Logger  *slog.Logger
}

// Bridge serves a Store to NATS clients. Close stops it.
type Bridge struct {
	api     *api
	log     *slog.Logger
	ns      *server.Server // embedded server, or nil
	url     string
	conn    *conn
	leaf    *leaf // push consumers' messages (leaf.go), or nil
	work    chan request
	workers sync.WaitGroup
	// inlineReply is the replier of the request the read loop answers.
	inlineReply replyTo

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
	hdr, data      []byte
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
		api:  &api{store: store, prefix: prefix, domain: cfg.Domain, log: log, now: time.Now, serverName: "eddy"},
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
		nopts := &server.Options{
			Host:      host,
			Port:      cfg.Port, // -1 is nats-server's "random port"
			NoLog:     true,
			NoSigs:    true,
			JetStream: false,
		}
		leafUser, leafPass := addLeafListener(nopts)
		ns, err := server.NewServer(nopts)
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
		b.api.serverName = ns.Name()
		cfg.LeafURL = embeddedLeafURL(nopts, leafUser, leafPass)
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

	if err := b.startConsumers(ctx, store, cfg); err != nil {
		b.shutdownServer()
		return nil, err
	}
	n := max(4, 4*runtime.GOMAXPROCS(0))
	b.workers.Add(n)
	for range n {
		go b.worker()
	}
	c, err := dialConn(ctx, opts, log, b.handle)
	if err != nil {
		close(b.work)
		b.workers.Wait()
		b.stopConsumers()
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

// handle runs on the connection's read loop. A request answered from a
// read or two is answered right here, its reply sent with the read
// loop's next flush: no hand-off between goroutines. Others (listings,
// batches, subject walks) are copied and handed to the workers, so they
// do not hold up the cheap ones.
func (b *Bridge) handle(m *inMsg) {
	if m.reply == "" {
		return // a request nobody waits for: the server ignores it too
	}
	if strings.HasPrefix(m.reply, b.api.prefix) {
		// The reply would be delivered back to this connection, by the
		// server goroutine our write waits for, while our read loop may
		// be the one writing: a deadlock. JetStream would ignore such a
		// reply anyway (it has no reply subject of its own).
		b.log.Debug("nats bridge: reply subject is an API subject, not answered", "subject", m.subject, "reply", m.reply)
		return
	}
	b.stopMu.RLock()
	defer b.stopMu.RUnlock()
	if b.stopping {
		return
	}
	if b.api.inline(m.subject, m.data) {
		// Only this goroutine uses inlineReply, so it needs no lock
		// and passing it allocates nothing.
		b.inlineReply = replyTo{b.conn, m.reply}
		b.api.respond(m.subject, m.hdr, m.data, &b.inlineReply)
		return
	}
	b.work <- request{subject: m.subject, reply: m.reply, hdr: bytes.Clone(m.hdr), data: bytes.Clone(m.data)}
}

// replyTo sends replies to one request's reply subject.
type replyTo struct {
	c       *conn
	subject string
}

func (r *replyTo) send(hdr, data []byte) { r.c.publish(r.subject, hdr, data) }

func (b *Bridge) worker() {
	defer b.workers.Done()
	for r := range b.work {
		b.api.respond(r.subject, r.hdr, r.data, &replyTo{b.conn, r.reply})
		b.conn.flush()
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
		b.stopConsumers()
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
