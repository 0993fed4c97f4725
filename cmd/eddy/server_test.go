package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/server"
)

func TestParseServerFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    serverOptions
		wantErr string
	}{
		{nil, serverOptions{}, ""},
		{[]string{"eddy.conf"}, serverOptions{configFile: "eddy.conf"}, ""},
		{[]string{"-"}, serverOptions{configFile: "-"}, ""},
		{[]string{"--port", "7000"}, serverOptions{flags: []serverFlag{{"port", []string{"7000"}}}}, ""},
		{[]string{"--port=7000"}, serverOptions{flags: []serverFlag{{"port", []string{"7000"}}}}, ""},
		{[]string{"--requirepass="}, serverOptions{flags: []serverFlag{{"requirepass", []string{""}}}}, ""},
		{[]string{"--requirepass", ""}, serverOptions{flags: []serverFlag{{"requirepass", []string{""}}}}, ""},
		{[]string{"e.conf", "--bind", "127.0.0.1", "::1", "--port", "0"}, serverOptions{configFile: "e.conf", flags: []serverFlag{
			{"bind", []string{"127.0.0.1", "::1"}}, {"port", []string{"0"}}}}, ""},
		{[]string{"--bind", "127.0.0.1 ::1"}, serverOptions{flags: []serverFlag{{"bind", []string{"127.0.0.1 ::1"}}}}, ""},
		{[]string{"--port", "1", "--help"}, serverOptions{help: true}, ""},
		{[]string{"-h"}, serverOptions{help: true}, ""},
		{[]string{"--port"}, serverOptions{}, "flag --port: missing value"},
		{[]string{"--port", "--dir", "x"}, serverOptions{}, "flag --port: missing value"},
		{[]string{"a.conf", "b.conf"}, serverOptions{}, `unexpected argument "b.conf"`},
		{[]string{"--port", "1", "--", "x"}, serverOptions{}, `unexpected argument "--"`},
	}
	for _, tt := range tests {
		got, err := parseServerFlags(tt.args)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseServerFlags(%q) err = %v, want %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseServerFlags(%q): %v", tt.args, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseServerFlags(%q) = %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "eddy.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestServerConfig(t *testing.T) {
	conf := writeFile(t, "port 7000\nappendfsync always\ntimeout 30\nbind 127.0.0.1 ::1\n")
	bad := writeFile(t, "port 7000\nrdbcompression yes\n")
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStop   bool
		wantStderr string // regexp
		check      func(c server.Config) bool
	}{
		{name: "defaults", check: func(c server.Config) bool {
			return c.Port == 6379 && c.Dir == "./data" && reflect.DeepEqual(c.Bind, []string{"127.0.0.1"})
		}},
		{name: "file", args: []string{conf}, check: func(c server.Config) bool {
			return c.Port == 7000 && c.AppendFsync == "always" && c.Timeout == 30 &&
				reflect.DeepEqual(c.Bind, []string{"127.0.0.1", "::1"})
		}},
		{name: "flags override file", args: []string{conf, "--port", "7001", "--appendfsync", "no", "--bind", "0.0.0.0"},
			check: func(c server.Config) bool {
				return c.Port == 7001 && c.AppendFsync == "no" && c.Timeout == 30 && reflect.DeepEqual(c.Bind, []string{"0.0.0.0"})
			}},
		{name: "later flag wins", args: []string{"--port", "1", "--port", "2"},
			check: func(c server.Config) bool { return c.Port == 2 }},
		{name: "quoted bind list", args: []string{"--bind", "127.0.0.1 ::1"},
			check: func(c server.Config) bool { return reflect.DeepEqual(c.Bind, []string{"127.0.0.1", "::1"}) }},
		{name: "stdin", args: []string{"-", "--dir", "/srv/eddy"}, stdin: "port 7002\ndir /elsewhere\n",
			check: func(c server.Config) bool { return c.Port == 7002 && c.Dir == "/srv/eddy" }},
		{name: "memory units", args: []string{"--cache-size", "1gb", "--proto-max-bulk-len", "2mb"},
			check: func(c server.Config) bool { return c.CacheSize == 1<<30 && c.ProtoMaxBulkLen == 2<<20 }},

		{name: "bad port", args: []string{"--port", "abc"}, wantCode: exitUsage, wantStop: true,
			wantStderr: `^eddy server: flag --port: bad value "abc" for directive "port": argument couldn't be parsed into an integer\n`},
		{name: "unknown flag", args: []string{"--sav", "900"}, wantCode: exitUsage, wantStop: true,
			wantStderr: `^eddy server: flag --sav: unknown directive "sav"\n`},
		{name: "bad enum", args: []string{"--appendfsync", "sometimes"}, wantCode: exitUsage, wantStop: true,
			wantStderr: `flag --appendfsync: bad value "sometimes" .*everysec, always, no`},
		{name: "two values for one", args: []string{"--port", "1", "2"}, wantCode: exitUsage, wantStop: true,
			wantStderr: `flag --port: directive "port": takes exactly one argument, got 2`},
		{name: "missing file", args: []string{filepath.Join(t.TempDir(), "nope.conf")}, wantCode: exitUsage, wantStop: true,
			wantStderr: `^eddy server: config file: open .*nope.conf: no such file`},
		{name: "bad file", args: []string{bad, "--port", "1"}, wantCode: exitUsage, wantStop: true,
			wantStderr: `^eddy server: config file .*eddy.conf: line 2: unknown directive "rdbcompression"\n`},
		{name: "help", args: []string{"--help"}, wantCode: exitOK, wantStop: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			cfg, code, stop := serverConfig(tt.args, env{strings.NewReader(tt.stdin), &out, &errb})
			if code != tt.wantCode || stop != tt.wantStop {
				t.Fatalf("code, stop = %d, %v; want %d, %v (stderr %q)", code, stop, tt.wantCode, tt.wantStop, errb.String())
			}
			if tt.wantStderr != "" && !regexp.MustCompile(tt.wantStderr).MatchString(errb.String()) {
				t.Fatalf("stderr = %q, want match for %q", errb.String(), tt.wantStderr)
			}
			if tt.check != nil && !tt.check(cfg) {
				t.Fatalf("unexpected config %+v", cfg)
			}
		})
	}
}

// lockedBuffer collects the server's log and says when "eddy ready" appears,
// so the test waits on the event rather than on time.
type lockedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	once  sync.Once
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if strings.Contains(b.buf.String(), `msg="eddy ready"`) {
		b.once.Do(func() { close(b.ready) })
	}
	return n, err
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRunServerReadyAndShutdown(t *testing.T) {
	// INFO must report the version `eddy --version` prints, whatever it is.
	version = "v9.8.7-test"
	t.Cleanup(func() { version = "" })
	logs := &lockedBuffer{ready: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- runServer(ctx, []string{"--port", "0", "--dir", t.TempDir()}, env{strings.NewReader(""), new(bytes.Buffer), logs})
	}()
	select {
	case <-logs.ready:
	case code := <-done:
		t.Fatalf("server exited with %d before ready; log:\n%s", code, logs.String())
	}
	m := regexp.MustCompile(`msg="eddy ready" addr=(127\.0\.0\.1:[1-9]\d*)\n`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("ready line not in the expected shape; log:\n%s", logs.String())
	}
	if got, want := infoField(t, m[1], "eddy_version"), eddyVersion(); got != want {
		t.Errorf("INFO eddy_version = %q, want %q (eddy --version's)", got, want)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit code after cancel = %d, want 0; log:\n%s", code, logs.String())
	}
}

// infoField asks the server at addr for INFO server and returns field's value.
func infoField(t *testing.T, addr, field string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	head, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		t.Fatalf("INFO reply starts %q (%v), want a bulk string", head, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil {
		t.Fatalf("INFO reply length %q: %v", head, err)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO server has no %s line:\n%s", field, body)
	return ""
}
