package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Helpers for the NATS bridge tests: a real nats-server in process (the
// truth), Eddy with its bridge on a free port, and a raw NATS client that
// returns reply bytes exactly as the wire carries them.

var natsReadyLine = regexp.MustCompile(`msg="nats bridge ready" url=(\S+)`)

// startEddyNATS starts Eddy with its embedded NATS server on a free port
// and returns the process and the NATS URL from its log.
func startEddyNATS(t *testing.T, args ...string) (*eddyProc, string) {
	t.Helper()
	if againstRedis {
		t.Skip("the NATS bridge has no Redis counterpart")
	}
	p := startEddy(t, append([]string{"--nats-port", "-1"}, args...)...)
	return p, eddyNatsURL(t, p)
}

// eddyNatsURL reads the bridge's URL from the log; Eddy logs it before
// "eddy ready", which startEddy has already seen.
func eddyNatsURL(t *testing.T, p *eddyProc) string {
	t.Helper()
	m := natsReadyLine.FindStringSubmatch(p.log.String())
	if m == nil {
		t.Fatalf("no %q line in the log:\n%s", "nats bridge ready", p.log.String())
	}
	return m[1]
}

// startNATS runs a nats-server in process on a free port, with JetStream
// (store in a temporary directory) when js is set; configure, if any,
// changes the options before the start (the server fills in the ports it
// took when they ask for -1).
func startNATS(t *testing.T, js bool, configure ...func(*natsserver.Options)) *natsserver.Server {
	t.Helper()
	opts := &natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	if js {
		opts.JetStream = true
		opts.StoreDir = t.TempDir()
	}
	for _, f := range configure {
		f(opts)
	}
	ns, err := natsserver.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns
}

// natsConnect is a nats.go connection closed when the test ends.
func natsConnect(t *testing.T, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, append([]nats.Option{nats.Timeout(5 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// rawNATS is a bare NATS client: one request at a time, replies as bytes.
type rawNATS struct {
	t     *testing.T
	c     net.Conn
	br    *bufio.Reader
	inbox string
}

func dialRawNATS(t *testing.T, rawURL string) *rawNATS {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := &rawNATS{t: t, c: c, br: bufio.NewReader(c), inbox: "_INBOX.raw"}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if line := r.line(); !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("expected INFO, got %q", line)
	}
	fmt.Fprintf(c, "CONNECT {\"verbose\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}\r\nSUB %s.* 1\r\nPING\r\n", r.inbox)
	for line := r.line(); line != "PONG"; line = r.line() {
		if strings.HasPrefix(line, "-ERR") {
			t.Fatal(line)
		}
	}
	return r
}

func (r *rawNATS) line() string {
	r.t.Helper()
	s, err := r.br.ReadString('\n')
	if err != nil {
		r.t.Fatalf("nats read: %v", err)
	}
	return strings.TrimRight(s, "\r\n")
}

// request publishes data to subject and returns the reply's header
// block (nil for a plain MSG) and payload.
func (r *rawNATS) request(subject string, data []byte) (hdr, payload []byte) {
	r.t.Helper()
	r.c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(r.c, "PUB %s %s.1 %d\r\n%s\r\n", subject, r.inbox, len(data), data)
	return r.next()
}

// next reads the next message addressed to the inbox.
func (r *rawNATS) next() (hdr, payload []byte) {
	r.t.Helper()
	r.c.SetDeadline(time.Now().Add(5 * time.Second))
	for {
		line := r.line()
		f := strings.Fields(line)
		var hlen, tlen int
		switch {
		case len(f) == 4 && f[0] == "MSG":
			tlen, _ = strconv.Atoi(f[3])
		case len(f) == 5 && f[0] == "HMSG":
			hlen, _ = strconv.Atoi(f[3])
			tlen, _ = strconv.Atoi(f[4])
		case line == "PING":
			io.WriteString(r.c, "PONG\r\n")
			continue
		default:
			continue
		}
		buf := make([]byte, tlen+2)
		if _, err := io.ReadFull(r.br, buf); err != nil {
			r.t.Fatal(err)
		}
		if f[0] == "MSG" {
			return nil, buf[:tlen]
		}
		return buf[:hlen], buf[hlen:tlen]
	}
}

var timeStampHeader = regexp.MustCompile(`(?m)^Nats-Time-Stamp: [^\r]*\r$`)

// maskTimes replaces what legitimately differs between two servers
// holding the same messages: JetStream stamps nanoseconds at publish,
// Eddy's time is its entry ID's milliseconds, taken at XADD.
func maskTimes(b []byte) []byte {
	return timeStampHeader.ReplaceAll(b, []byte("Nats-Time-Stamp: T\r"))
}

// maskJSON decodes a JSON reply, blanks the named time fields wherever
// they occur, and re-encodes it for comparison.
func maskJSON(t *testing.T, b []byte, fields ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("reply %q: %v", b, err)
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				for _, f := range fields {
					if k == f {
						v[k] = "T"
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	out, _ := json.Marshal(v)
	return string(bytes.TrimSpace(out))
}
