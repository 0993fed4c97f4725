package bridge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nkeys"
)

// conn is a minimal NATS client: CONNECT, SUB with a queue group, HPUB
// replies, PING/PONG, reconnect. The bridge speaks the protocol itself
// rather than through nats.go because a reply must carry an exact status
// line ("NATS/1.0 404 Message Not Found") and headers in nats-server's
// order; nats.go can only publish a header map behind a bare "NATS/1.0".
type conn struct {
	opts    connOptions
	log     *slog.Logger
	handler func(m *inMsg)

	// Replies are flushed when the read loop has nothing more buffered
	// (or by a worker after its replies), so a burst of requests is
	// answered with one write.
	wire

	pong     chan struct{} // PONGs to our PINGs during a handshake
	closing  chan struct{}
	closeErr sync.Once
	done     chan struct{} // closed when the read loop has exited
}

type connOptions struct {
	url   *url.URL
	creds string // path of a .creds file, or ""
	subs  []subscription
	// dial opens the transport; nil dials url's host over TCP.
	dial func(ctx context.Context) (net.Conn, error)
}

type subscription struct {
	subject, queue string
}

// inMsg is one MSG/HMSG from the server. Subject and reply are copies;
// hdr and data alias a buffer reused after the handler returns.
type inMsg struct {
	subject, reply string
	hdr, data      []byte
}

// serverInfo is the part of the server's INFO the handshake needs.
type serverInfo struct {
	Nonce       string `json:"nonce"`
	TLSRequired bool   `json:"tls_required"`
	Headers     bool   `json:"headers"`
}

type connectMsg struct {
	Verbose      bool   `json:"verbose"`
	Pedantic     bool   `json:"pedantic"`
	TLSRequired  bool   `json:"tls_required"`
	Name         string `json:"name"`
	Lang         string `json:"lang"`
	Version      string `json:"version"`
	Protocol     int    `json:"protocol"`
	Headers      bool   `json:"headers"`
	NoResponders bool   `json:"no_responders"`
	User         string `json:"user,omitempty"`
	Pass         string `json:"pass,omitempty"`
	Token        string `json:"auth_token,omitempty"`
	JWT          string `json:"jwt,omitempty"`
	Sig          string `json:"sig,omitempty"`
}

// dialConn connects and subscribes; the subscriptions are live when it
// returns (a PING after the SUBs has been answered).
func dialConn(ctx context.Context, opts connOptions, log *slog.Logger, handler func(*inMsg)) (*conn, error) {
	c := &conn{
		opts:    opts,
		log:     log,
		handler: handler,
		pong:    make(chan struct{}, 1),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
	nc, br, err := c.handshake(ctx)
	if err != nil {
		return nil, err
	}
	go c.run(nc, br)
	return c, nil
}

// handshake dials, authenticates, subscribes and waits for the PONG that
// proves the server has processed the SUBs.
func (c *conn) handshake(ctx context.Context) (net.Conn, *bufio.Reader, error) {
	var nc net.Conn
	var err error
	if c.opts.dial != nil {
		nc, err = c.opts.dial(ctx)
	} else {
		var d net.Dialer
		host := c.opts.url.Host
		if c.opts.url.Port() == "" {
			host = net.JoinHostPort(c.opts.url.Hostname(), "4222")
		}
		nc, err = d.DialContext(ctx, "tcp", host)
	}
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (net.Conn, *bufio.Reader, error) {
		nc.Close()
		return nil, nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	} else {
		nc.SetDeadline(time.Now().Add(10 * time.Second))
	}
	br := bufio.NewReaderSize(nc, 64<<10)
	line, err := readLine(br)
	if err != nil {
		return fail(fmt.Errorf("nats: reading INFO: %w", err))
	}
	js, ok := bytes.CutPrefix(line, []byte("INFO "))
	if !ok {
		return fail(fmt.Errorf("nats: expected INFO, got %q", line))
	}
	var info serverInfo
	if err := json.Unmarshal(js, &info); err != nil {
		return fail(fmt.Errorf("nats: bad INFO: %w", err))
	}
	if !info.Headers {
		return fail(errors.New("nats: the server does not support headers"))
	}
	u := c.opts.url
	if info.TLSRequired || u.Scheme == "tls" {
		tc := tls.Client(nc, &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail(fmt.Errorf("nats: TLS: %w", err))
		}
		nc = tc
		br = bufio.NewReaderSize(nc, 64<<10)
	}
	cm := connectMsg{
		TLSRequired: info.TLSRequired, Name: "eddy-bridge", Lang: "go", Version: "eddy",
		Protocol: 1, Headers: true, NoResponders: true,
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			cm.User, cm.Pass = u.User.Username(), p
		} else {
			cm.Token = u.User.Username()
		}
	}
	if c.opts.creds != "" {
		jwt, sig, err := signWithCreds(c.opts.creds, info.Nonce)
		if err != nil {
			return fail(err)
		}
		cm.JWT, cm.Sig = jwt, sig
	}
	cj, err := json.Marshal(cm)
	if err != nil {
		return fail(err)
	}
	var b bytes.Buffer
	b.WriteString("CONNECT ")
	b.Write(cj)
	b.WriteString("\r\n")
	for i, s := range c.opts.subs {
		fmt.Fprintf(&b, "SUB %s %s %d\r\n", s.subject, s.queue, i+1)
	}
	b.WriteString("PING\r\n")
	if _, err := nc.Write(b.Bytes()); err != nil {
		return fail(err)
	}
	for {
		line, err := readLine(br)
		if err != nil {
			return fail(fmt.Errorf("nats: waiting for PONG: %w", err))
		}
		switch {
		case bytes.Equal(line, []byte("PONG")):
			nc.SetDeadline(time.Time{})
			c.attach(nc, nil)
			return nc, br, nil
		case bytes.HasPrefix(line, []byte("-ERR")):
			return fail(fmt.Errorf("nats: server refused: %s", line[4:]))
		case bytes.Equal(line, []byte("PING")):
			if _, err := nc.Write([]byte("PONG\r\n")); err != nil {
				return fail(err)
			}
		}
		// +OK and INFO updates need nothing.
	}
}

// signWithCreds reads a .creds file (user JWT and nkey seed) and signs
// the server's nonce, as nats.go's UserCredentials does.
func signWithCreds(path, nonce string) (jwt, sig string, err error) {
	contents, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("nats creds: %w", err)
	}
	jwt, err = nkeys.ParseDecoratedJWT(contents)
	if err != nil {
		return "", "", fmt.Errorf("nats creds %s: %w", path, err)
	}
	kp, err := nkeys.ParseDecoratedNKey(contents)
	if err != nil {
		return "", "", fmt.Errorf("nats creds %s: %w", path, err)
	}
	defer kp.Wipe()
	raw, err := kp.Sign([]byte(nonce))
	if err != nil {
		return "", "", fmt.Errorf("nats creds %s: %w", path, err)
	}
	return jwt, base64.RawURLEncoding.EncodeToString(raw), nil
}

// run reads until the connection drops, then reconnects until close.
func (c *conn) run(nc net.Conn, br *bufio.Reader) {
	defer close(c.done)
	redial{
		name: "nats bridge", log: c.log, closing: c.closing,
		read: c.readLoop, dial: c.handshake,
		drop: c.detach,
	}.run(nc, br)
}

// redial is a bridge connection's life: read until the connection fails,
// forget it (drop), then dial again with a growing backoff until that
// succeeds or closing is closed.
type redial struct {
	name    string // for the log
	log     *slog.Logger
	closing <-chan struct{}
	read    func(*bufio.Reader) error
	drop    func()
	dial    func(context.Context) (net.Conn, *bufio.Reader, error)
}

func (r redial) run(nc net.Conn, br *bufio.Reader) {
	backoff := 100 * time.Millisecond
	for {
		err := r.read(br)
		r.drop()
		nc.Close()
		select {
		case <-r.closing:
			return
		default:
		}
		r.log.Warn(r.name+" disconnected, reconnecting", "err", err)
		for {
			select {
			case <-r.closing:
				return
			case <-time.After(backoff):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			var derr error
			nc, br, derr = r.dial(ctx)
			cancel()
			if derr == nil {
				r.log.Info(r.name + " reconnected")
				backoff = 100 * time.Millisecond
				break
			}
			backoff = min(backoff*2, 2*time.Second)
			r.log.Debug(r.name+" reconnect failed", "err", derr)
		}
	}
}

// readLoop parses server messages and hands MSG/HMSG to the handler on
// this goroutine; the handler must copy what it keeps. What the handler
// wrote is flushed once nothing more is buffered: one write answers a
// burst of requests, and a lone request is answered at once.
func (c *conn) readLoop(br *bufio.Reader) error {
	var buf []byte
	var m inMsg // reused: the handler keeps nothing
	for {
		if br.Buffered() == 0 {
			c.flush()
		}
		line, err := readLine(br)
		if err != nil {
			return err
		}
		var hmsg bool
		switch {
		case bytes.HasPrefix(line, []byte("MSG ")):
		case bytes.HasPrefix(line, []byte("HMSG ")):
			hmsg = true
		case bytes.Equal(line, []byte("PING")):
			c.write(func(w *bufio.Writer) { w.WriteString("PONG\r\n") })
			continue
		case bytes.HasPrefix(line, []byte("-ERR")):
			c.log.Warn("nats bridge: server error", "err", string(bytes.TrimSpace(line[4:])))
			continue
		default: // PONG, +OK, INFO
			continue
		}
		var fa [7][]byte
		f := splitFields(line, fa[:0])
		m = inMsg{}
		var hlen, tlen int
		switch {
		case !hmsg && (len(f) == 4 || len(f) == 5):
			m.subject = string(f[1])
			if len(f) == 5 {
				m.reply = string(f[3])
			}
			tlen, err = strconv.Atoi(string(f[len(f)-1]))
		case hmsg && (len(f) == 5 || len(f) == 6):
			m.subject = string(f[1])
			if len(f) == 6 {
				m.reply = string(f[3])
			}
			hlen, err = strconv.Atoi(string(f[len(f)-2]))
			if err == nil {
				tlen, err = strconv.Atoi(string(f[len(f)-1]))
			}
		default:
			return fmt.Errorf("nats: bad message line %q", line)
		}
		if err != nil || hlen < 0 || tlen < hlen {
			return fmt.Errorf("nats: bad message line %q", line)
		}
		if cap(buf) < tlen+2 {
			buf = make([]byte, tlen+2)
		}
		buf = buf[:tlen+2]
		if _, err := io.ReadFull(br, buf); err != nil {
			return err
		}
		m.hdr, m.data = buf[:hlen], buf[hlen:tlen]
		c.handler(&m)
	}
}

// publish writes one message for the read loop's next flush (others
// call flush after it); hdr, when not empty, is a complete header block
// ending in an empty line.
func (c *conn) publish(subject string, hdr, data []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.bw != nil {
		c.writeMsgLocked("PUB", "HPUB", subject, nil, hdr, data)
	}
}

// close flushes what is written and closes the connection.
func (c *conn) close() {
	c.closeErr.Do(func() {
		close(c.closing)
		c.shut()
	})
	<-c.done
}

// splitFields is bytes.Fields for a protocol line (spaces and tabs),
// into dst's room; at most cap(dst) fields, the rest dropped, which a
// message line with too many fields then fails on.
func splitFields(line []byte, dst [][]byte) [][]byte {
	for len(line) > 0 && len(dst) < cap(dst) {
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		line = line[i:]
		if len(line) == 0 {
			break
		}
		j := 0
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		dst = append(dst, line[:j])
		line = line[j:]
	}
	return dst
}

// readLine returns one protocol line without its CRLF; the slice is
// valid until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, errors.New("nats: protocol line too long")
	}
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}
