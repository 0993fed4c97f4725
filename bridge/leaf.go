package bridge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// leaf is the bridge's leafnode connection to its NATS server, the way
// push consumers' messages leave the bridge. A push consumer delivers to
// the deliver inbox, but the subscriber must see the message's stored
// subject ($KV.cfg.color): nats-server rewrites the subject only for a
// message that arrives over a route, gateway or leaf connection with a
// reply "$JS.ACK.…@<subject>" (client.go, processMsgResults). A client
// connection such as conn cannot do that.
//
// The hub also tells a leaf, with LS+ and LS-, which subjects have
// subscribers; that is how a consumer learns its deliver inbox is gone.
// The leaf itself subscribes to nothing, so the hub sends it no messages.
type leaf struct {
	url   *url.URL
	creds string
	log   *slog.Logger

	wire
	maxPayload int // guarded by wmu; the hub's max_payload
	flushReq   chan struct{}

	imu      sync.Mutex
	interest map[string]struct{} // guarded by imu: subjects with a subscriber
	wild     map[string]struct{} // guarded by imu: those with wildcards

	closing   chan struct{}
	closeOnce sync.Once
	done      chan struct{} // closed when the read loop has exited
	serverID  string
}

// errTooBig is a message larger than the hub's max_payload: publishing
// it would make the hub close the connection.
var errTooBig = errors.New("nats bridge: message larger than the server's max_payload")

// errNotConnected is a publish while the leaf is down.
var errNotConnected = errors.New("nats bridge: leafnode connection down")

// leafInfo is the part of the hub's INFO the leaf needs.
type leafInfo struct {
	Nonce       string `json:"nonce"`
	TLSRequired bool   `json:"tls_required"`
	Headers     bool   `json:"headers"`
	MaxPayload  int    `json:"max_payload"`
}

// leafConnect is nats-server's leafConnectInfo, the fields a leaf that
// only publishes needs.
type leafConnect struct {
	User    string `json:"user,omitempty"`
	Pass    string `json:"pass,omitempty"`
	Token   string `json:"auth_token,omitempty"`
	JWT     string `json:"jwt,omitempty"`
	Sig     string `json:"sig,omitempty"`
	ID      string `json:"server_id"`
	Name    string `json:"name"`
	Headers bool   `json:"headers"`
}

// dialLeaf connects to the hub's leafnode port; the connection is up and
// authenticated when it returns. It reconnects until close.
func dialLeaf(ctx context.Context, u *url.URL, creds string, log *slog.Logger) (*leaf, error) {
	l := &leaf{
		url: u, creds: creds, log: log,
		flushReq: make(chan struct{}, 1),
		interest: make(map[string]struct{}),
		wild:     make(map[string]struct{}),
		closing:  make(chan struct{}),
		done:     make(chan struct{}),
		serverID: "EDDY" + randomToken(20),
	}
	nc, br, err := l.handshake(ctx)
	if err != nil {
		return nil, err
	}
	go l.flusher()
	go l.run(nc, br)
	return l, nil
}

func (l *leaf) handshake(ctx context.Context) (net.Conn, *bufio.Reader, error) {
	host := l.url.Host
	if l.url.Port() == "" {
		host = net.JoinHostPort(l.url.Hostname(), "7422")
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, nil, fmt.Errorf("nats leafnode: %w", err)
	}
	fail := func(err error) (net.Conn, *bufio.Reader, error) {
		nc.Close()
		return nil, nil, fmt.Errorf("nats leafnode: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	} else {
		nc.SetDeadline(time.Now().Add(10 * time.Second))
	}
	br := bufio.NewReaderSize(nc, 16<<10)
	line, err := readLine(br)
	if err != nil {
		return fail(fmt.Errorf("reading INFO: %w", err))
	}
	js, ok := bytes.CutPrefix(line, []byte("INFO "))
	if !ok {
		return fail(fmt.Errorf("expected INFO, got %q", line))
	}
	var info leafInfo
	if err := json.Unmarshal(js, &info); err != nil {
		return fail(fmt.Errorf("bad INFO: %w", err))
	}
	if !info.Headers {
		return fail(errors.New("the server does not support headers"))
	}
	if info.TLSRequired || l.url.Scheme == "tls" {
		tc := tls.Client(nc, &tls.Config{ServerName: l.url.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail(fmt.Errorf("TLS: %w", err))
		}
		nc = tc
		br = bufio.NewReaderSize(nc, 16<<10)
	}
	cm := leafConnect{ID: l.serverID, Name: "eddy-bridge", Headers: true}
	if u := l.url.User; u != nil {
		if p, ok := u.Password(); ok {
			cm.User, cm.Pass = u.Username(), p
		} else {
			cm.Token = u.Username()
		}
	}
	if l.creds != "" {
		if cm.JWT, cm.Sig, err = signWithCreds(l.creds, info.Nonce); err != nil {
			return fail(err)
		}
	}
	cj, err := json.Marshal(cm)
	if err != nil {
		return fail(err)
	}
	if _, err := fmt.Fprintf(nc, "CONNECT %s\r\nPING\r\n", cj); err != nil {
		return fail(err)
	}
	l.imu.Lock()
	clear(l.interest) // the hub sends every subscription again
	clear(l.wild)
	l.imu.Unlock()
	for {
		line, err := readLine(br)
		if err != nil {
			return fail(fmt.Errorf("waiting for PONG: %w", err))
		}
		switch {
		case bytes.Equal(line, []byte("PONG")):
			nc.SetDeadline(time.Time{})
			l.attach(nc, func() { l.maxPayload = info.MaxPayload })
			return nc, br, nil
		case bytes.HasPrefix(line, []byte("-ERR")):
			return fail(fmt.Errorf("server refused: %s", bytes.TrimSpace(line[4:])))
		case bytes.Equal(line, []byte("PING")):
			if _, err := nc.Write([]byte("PONG\r\n")); err != nil {
				return fail(err)
			}
		default:
			l.control(line)
		}
	}
}

// run reads until the connection drops, then reconnects until close.
func (l *leaf) run(nc net.Conn, br *bufio.Reader) {
	defer close(l.done)
	redial{
		name: "nats bridge leafnode", log: l.log, closing: l.closing,
		read: l.readLoop, dial: l.handshake,
		drop: l.detach,
	}.run(nc, br)
}

// readLoop answers PINGs and tracks interest; the hub sends a leaf that
// subscribes to nothing no messages.
func (l *leaf) readLoop(br *bufio.Reader) error {
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		switch {
		case bytes.Equal(line, []byte("PING")):
			l.write(func(w *bufio.Writer) { w.WriteString("PONG\r\n") })
		case bytes.HasPrefix(line, []byte("-ERR")):
			l.log.Warn("nats bridge leafnode: server error", "err", string(bytes.TrimSpace(line[4:])))
		default:
			l.control(line)
		}
	}
}

// control handles LS+ and LS- (subject, or subject and queue and weight
// for a queue subscription); INFO, PONG and +OK need nothing.
func (l *leaf) control(line []byte) {
	f := bytes.Fields(line)
	if len(f) != 2 { // queue subscriptions are never deliver subjects
		return
	}
	subject := string(f[1])
	switch string(f[0]) {
	case "LS+":
		l.imu.Lock()
		l.interest[subject] = struct{}{}
		if subjectHasWildcard(subject) {
			l.wild[subject] = struct{}{}
		}
		l.imu.Unlock()
	case "LS-":
		l.imu.Lock()
		delete(l.interest, subject)
		delete(l.wild, subject)
		l.imu.Unlock()
	}
}

// hasInterest reports whether subject has a (non-queue) subscriber, to
// it or to a wildcard that covers it.
func (l *leaf) hasInterest(subject string) bool {
	l.imu.Lock()
	defer l.imu.Unlock()
	return l.hasInterestLocked(subject)
}

func (l *leaf) hasInterestLocked(subject string) bool {
	if _, ok := l.interest[subject]; ok {
		return true
	}
	for w := range l.wild {
		if subjectMatches(w, []byte(subject)) {
			return true
		}
	}
	return false
}

// publish sends one message; reply may carry "@<subject>", the subject
// the subscriber sees. hdr, when not empty, is a complete header block.
func (l *leaf) publish(subject string, reply, hdr, data []byte) error {
	var err error
	l.wmu.Lock()
	switch {
	case l.bw == nil:
		err = errNotConnected
	case l.maxPayload > 0 && len(hdr)+len(data) > l.maxPayload:
		err = errTooBig
	default:
		l.writeMsgLocked("LMSG", "HMSG", subject, reply, hdr, data) // LMSG: a leaf's MSG
	}
	l.wmu.Unlock()
	if err == nil {
		l.requestFlush()
	}
	return err
}

// write writes through the wire and asks the flusher to send it.
func (l *leaf) write(fn func(w *bufio.Writer)) {
	l.wire.write(fn)
	l.requestFlush()
}

func (l *leaf) requestFlush() {
	select {
	case l.flushReq <- struct{}{}:
	default:
	}
}

func (l *leaf) flusher() {
	for {
		select {
		case <-l.closing:
			return
		case <-l.flushReq:
		}
		l.flush()
	}
}

// close flushes and closes the connection and waits for the read loop.
func (l *leaf) close() {
	l.closeOnce.Do(func() {
		close(l.closing)
		l.shut()
	})
	<-l.done
}

// randomToken is n random letters and digits: consumer names, the leaf's
// server ID, the embedded leaf listener's credentials.
func randomToken(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// addLeafListener gives the embedded server a leafnode listener on
// 127.0.0.1, a free port, for the bridge alone: random credentials.
func addLeafListener(opts *server.Options) (user, pass string) {
	user, pass = "eddy-"+randomToken(8), randomToken(32)
	opts.LeafNode.Host = "127.0.0.1"
	opts.LeafNode.Port = -1
	opts.LeafNode.Username = user
	opts.LeafNode.Password = pass
	return user, pass
}

// embeddedLeafURL is the listener's address once the server is ready:
// nats-server writes the port it bound back into the options it was
// given (leafnode.go, startLeafNodeAcceptLoop).
func embeddedLeafURL(opts *server.Options, user, pass string) string {
	u := url.URL{Scheme: "nats", User: url.UserPassword(user, pass), Host: net.JoinHostPort(opts.LeafNode.Host, strconv.Itoa(opts.LeafNode.Port))}
	return u.String()
}

// startConsumers sets up the consumer registry and, when there is a
// leafnode URL, the leaf it publishes through. With an external server
// a leaf that cannot connect only turns consumers off.
func (b *Bridge) startConsumers(ctx context.Context, store Store, cfg Config) error {
	cons := newConsumers(store, nil, b.log)
	b.api.cons = cons
	if cfg.LeafURL == "" {
		cons.noPub = "the bridge joined an existing NATS server without a leafnode URL"
		return nil
	}
	u, err := url.Parse(cfg.LeafURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("nats leafnode url: not nats://host:port")
	}
	l, err := dialLeaf(ctx, u, cfg.Creds, b.log)
	if err != nil {
		if b.ns != nil {
			return err
		}
		b.log.Warn("nats bridge: no leafnode connection, push consumers are off", "url", u.Redacted(), "err", err)
		cons.noPub = "its leafnode connection failed: " + err.Error()
		return nil
	}
	b.leaf, cons.pub = l, l
	return nil
}

// stopConsumers stops every consumer, then the leaf they publish through.
func (b *Bridge) stopConsumers() {
	if b.api.cons != nil {
		b.api.cons.close()
	}
	if b.leaf != nil {
		b.leaf.close()
	}
}

// Appended tells the bridge that entries were appended to stream key
// (database 0), so its consumers deliver them now. It must not block:
// it is called on the store's commit path. Safe after Close.
func (b *Bridge) Appended(key []byte) {
	if b.api.cons != nil {
		b.api.cons.appended(key)
	}
}
