package tests

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// The suite's configuration, fixed by TestMain before any test runs and
// only read afterwards.
var (
	// eddyBin is the binary built from ../cmd/eddy.
	eddyBin string
	// againstRedis makes startEddy start a redis-server instead of Eddy
	// (EDDY_TEST_AGAINST_REDIS=1), which proves that the tests themselves
	// are right: every test must pass with Redis on both sides.
	againstRedis bool
)

const (
	readyTimeout = 20 * time.Second // from exec to "eddy ready" / PING
	stopTimeout  = 15 * time.Second // from SIGTERM to exit, then SIGKILL
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	againstRedis = os.Getenv("EDDY_TEST_AGAINST_REDIS") == "1"
	if !againstRedis {
		dir, err := os.MkdirTemp("", "eddy-tests-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		eddyBin = filepath.Join(dir, "eddy")
		args := []string{"build"}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "-o", eddyBin, "../cmd/eddy")
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go %s: %v\n%s", strings.Join(args, " "), err, out)
			return 1
		}
	}
	return m.Run()
}

// eddyProc is the server under test: Eddy, or a redis-server standing in
// for it when EDDY_TEST_AGAINST_REDIS=1.
type eddyProc struct{ *serverProc }

// redisProc is a real redis-server, the reference for differential tests.
type redisProc struct{ *serverProc }

// startEddy runs `eddy server --port 0 --dir <tmp> args...` (with the NATS
// bridge off unless args set --nats-port) and waits for
// its "eddy ready" log line. It is stopped when t ends, and its log is
// printed if t failed.
func startEddy(t testing.TB, args ...string) *eddyProc {
	t.Helper()
	if againstRedis {
		requireRedisServer(t)
		p := newServerProc(t, "redis as eddy", redisStandInArgs(args))
		return &eddyProc{p}
	}
	// The NATS bridge would take the fixed port 4222: off unless the test
	// asks for it.
	if !slices.Contains(args, "--nats-port") {
		args = append([]string{"--nats-port", "0"}, args...)
	}
	p := newServerProc(t, "eddy", args)
	return &eddyProc{p}
}

// startRedis runs a real redis-server on a free port with persistence off.
// Without redis-server on PATH the test is skipped, except in CI (CI=true)
// where it fails, so that CI can never skip the differential tests quietly.
func startRedis(t testing.TB, args ...string) *redisProc {
	t.Helper()
	requireRedisServer(t)
	base := []string{"--save", "", "--appendonly", "no"}
	return &redisProc{newServerProc(t, "redis", append(base, args...))}
}

// eddyOnly skips a test of something Redis does not do, or does otherwise,
// when the suite runs against Redis (EDDY_TEST_AGAINST_REDIS=1).
func eddyOnly(t testing.TB, why string) {
	t.Helper()
	if againstRedis {
		t.Skip(why)
	}
}

func requireRedisServer(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is not on PATH (required in CI): %v", err)
		}
		t.Skipf("redis-server is not on PATH: %v", err)
	}
}

// redisStandInArgs turns Eddy flags into redis-server ones. The stand-in
// keeps an append-only file so that Restart and Kill9 behave like Eddy's
// (data survives); `--appendfsync` maps directly.
func redisStandInArgs(args []string) []string {
	out := []string{"--save", "", "--appendonly", "yes", "--appendfsync", "everysec"}
	for i := 0; i < len(args); i++ {
		if args[i] == "--appendfsync" && i+1 < len(args) {
			out[len(out)-1] = args[i+1]
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// serverProc is one server process, restartable on the same directory.
type serverProc struct {
	t     testing.TB
	name  string   // for messages: "eddy", "redis", "redis as eddy"
	args  []string // flags after --port/--dir
	dir   string
	redis bool // a redis-server (name is not "eddy"): the harness picks its port
	// pickPort gives a redis-server's port; freePort unless a test of the
	// harness says otherwise.
	pickPort func() (int, error)
	log      *logBuffer

	mu   sync.Mutex    // guards cmd, addr, done
	cmd  *exec.Cmd     // the running process, nil when stopped
	addr string        // host:port of the running process
	done chan struct{} // closed when cmd has exited
}

func newServerProc(t testing.TB, name string, args []string) *serverProc {
	t.Helper()
	p := stoppedServerProc(t, name, args)
	p.start()
	return p
}

// stoppedServerProc makes a serverProc that start will launch; t's cleanup
// stops it.
func stoppedServerProc(t testing.TB, name string, args []string) *serverProc {
	p := &serverProc{
		t:        t,
		name:     name,
		args:     args,
		dir:      t.TempDir(),
		redis:    name != "eddy",
		log:      &logBuffer{},
		pickPort: freePort,
	}
	t.Cleanup(func() {
		if err := p.stop(syscall.SIGTERM); err != nil {
			t.Errorf("%s did not shut down cleanly: %v", p.name, err)
		}
		if bytes.Contains(p.log.Bytes(), []byte("WARNING: DATA RACE")) {
			t.Errorf("%s reported a data race", p.name)
		}
		if t.Failed() {
			t.Logf("%s log (%s):\n%s", p.name, p.dir, p.log.String())
		}
	})
	return p
}

// Addr is the host:port the server listens on now (it changes on Restart).
func (p *serverProc) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// Dir is the server's data directory, kept across restarts.
func (p *serverProc) Dir() string { return p.dir }

// Client returns a go-redis client (RESP2, small pool, no retries) closed
// when the test ends. It dials the current address, so it keeps working
// across Restart.
func (p *serverProc) Client() *redis.Client {
	var d net.Dialer
	c := redis.NewClient(&redis.Options{
		// The dialer asks p, but Addr must still be an address: go-redis
		// resolves a host name in NewClient (to classify the endpoint for
		// maintenance notifications), and a placeholder name stalled
		// each client for the resolver's 2 s timeout where DNS is slow.
		Addr:     p.Addr(),
		Protocol: 2,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, p.Addr())
		},
		PoolSize:        4,
		MaxRetries:      -1,
		DisableIdentity: true,
		ReadTimeout:     10 * time.Second,
		WriteTimeout:    10 * time.Second,
	})
	p.t.Cleanup(func() { c.Close() })
	return c
}

// Raw opens a raw RESP connection, closed when the test ends.
func (p *serverProc) Raw() *rawConn {
	p.t.Helper()
	return dialRaw(p.t, p.Addr())
}

// Kill9 kills the server with SIGKILL, as a crash would, and waits for it.
func (p *serverProc) Kill9() {
	p.t.Helper()
	p.stop(syscall.SIGKILL)
}

// Stop shuts the server down with SIGTERM and fails the test if it does not
// exit cleanly.
func (p *serverProc) Stop() {
	p.t.Helper()
	if err := p.stop(syscall.SIGTERM); err != nil {
		p.t.Errorf("%s did not shut down cleanly: %v", p.name, err)
	}
}

// Restart stops the server (if it is running) with SIGTERM and starts it
// again on the same directory; the port may change.
func (p *serverProc) Restart() {
	p.t.Helper()
	p.Stop()
	p.start()
}

// start launches the process and waits until it serves.
func (p *serverProc) start() {
	p.t.Helper()
	deadline := time.Now().Add(readyTimeout)
	for attempt := 1; ; attempt++ {
		err := p.launch(deadline)
		if err == nil {
			return
		}
		// redis-server may lose the race for the port it was given to
		// another process; take another one.
		if p.redis && errors.Is(err, errExited) && attempt < 5 && time.Now().Before(deadline) {
			p.t.Logf("%s: %v; retrying on another port", p.name, err)
			continue
		}
		p.t.Fatalf("starting %s: %v\n%s", p.name, err, p.log.String())
	}
}

var errExited = errors.New("exited before it was ready")

var (
	readyLine      = regexp.MustCompile(`msg="eddy ready" addr=(\S+)`)
	redisReadyLine = regexp.MustCompile(`\* Ready to accept connections`)
)

func (p *serverProc) launch(deadline time.Time) error {
	var cmd *exec.Cmd
	var addr string
	if p.redis {
		port, err := p.pickPort()
		if err != nil {
			return err
		}
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", p.dir}, p.args...)
		cmd = exec.Command("redis-server", args...)
	} else {
		args := append([]string{"server", "--port", "0", "--dir", p.dir}, p.args...)
		cmd = exec.Command(eddyBin, args...)
		// The stream engine checks every PEL write against the rule
		// its SingleDeletes rely on (stream/group_store.go).
		cmd.Env = append(os.Environ(), "EDDY_CHECK_PEL=1")
	}
	readyRe := readyLine
	if p.redis {
		readyRe = redisReadyLine
	}
	ready := p.log.watch(readyRe)
	cmd.Stdout = p.log
	cmd.Stderr = p.log
	fmt.Fprintf(p.log, "### %s: %s\n", time.Now().Format(time.TimeOnly), strings.Join(cmd.Args, " "))
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(p.log, "### %s: exited: %v\n", time.Now().Format(time.TimeOnly), err)
		close(done)
	}()
	p.mu.Lock()
	p.cmd, p.done, p.addr = cmd, done, addr
	p.mu.Unlock()

	fail := func(err error) error {
		p.stop(syscall.SIGKILL)
		return err
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	// Each server says when it listens, in its own output. Polling the
	// port instead is not enough: when redis-server loses the race for
	// its port, whoever took it may answer PING (CI saw an Eddy of a
	// parallel test do so).
	select {
	case m := <-ready:
		if !p.redis {
			p.mu.Lock()
			p.addr = m[1]
			p.mu.Unlock()
		}
		return nil
	case <-done:
		return errExited
	case <-timer.C:
		return fail(fmt.Errorf("no %q log line within %v", readyRe, readyTimeout))
	}
}

// stop signals the process, escalates to SIGKILL after stopTimeout, and
// waits for it. It returns the exit error for a SIGTERM that did not end in
// a clean exit.
func (p *serverProc) stop(sig syscall.Signal) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(stopTimeout):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("still running %v after %v; killed", sig, stopTimeout)
	}
	if sig == syscall.SIGTERM && !cmd.ProcessState.Success() {
		return fmt.Errorf("exit status after SIGTERM: %v", cmd.ProcessState)
	}
	return nil
}

// freePort asks the kernel for a free port. Another process may take it
// before redis-server binds it; start retries when that happens.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// logBuffer keeps a server's whole output across restarts and tells a
// waiter when a line matching its pattern is written.
type logBuffer struct {
	mu      sync.Mutex // guards all fields
	buf     bytes.Buffer
	partial []byte // the current line, until its newline arrives
	re      *regexp.Regexp
	found   chan []string
}

// watch arms the buffer for one match of re, delivered on the channel.
func (b *logBuffer) watch(re *regexp.Regexp) <-chan []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.re, b.found = re, make(chan []string, 1)
	return b.found
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	b.partial = append(b.partial, p...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		if b.re != nil {
			if m := b.re.FindStringSubmatch(string(b.partial[:i])); m != nil {
				b.found <- m
				b.re = nil
			}
		}
		b.partial = b.partial[i+1:]
	}
	return len(p), nil
}

func (b *logBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

func (b *logBuffer) String() string { return string(b.Bytes()) }

// waitFor polls cond every few milliseconds until it holds or d passes.
// It is for state the server exposes but does not announce (INFO fields).
func waitFor(t testing.TB, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s (last error: %v)", d, what, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHarnessStandInArgs pins the Eddy-to-redis-server flag translation.
func TestHarnessStandInArgs(t *testing.T) {
	t.Parallel()
	got := strings.Join(redisStandInArgs([]string{"--appendfsync", "always", "--x", "1"}), " ")
	want := "--save  --appendonly yes --appendfsync always --x 1"
	if got != want {
		t.Errorf("redisStandInArgs = %q, want %q", got, want)
	}
}

// TestHarnessRedisPortTaken gives redis-server a port that another server
// holds, one that answers PING as Redis would (in CI it was a parallel
// test's Eddy). The harness must notice that its own redis-server never
// listened, and start it on another port, rather than hand the test the
// stranger.
func TestHarnessRedisPortTaken(t *testing.T) {
	t.Parallel()
	requireRedisServer(t)
	stranger, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	go func() {
		for {
			c, err := stranger.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 512)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					if _, err := c.Write([]byte("+PONG\r\n")); err != nil {
						return
					}
				}
			}()
		}
	}()

	p := stoppedServerProc(t, "redis", []string{"--save", "", "--appendonly", "no"})
	picks := 0
	p.pickPort = func() (int, error) {
		picks++
		if picks == 1 {
			return stranger.Addr().(*net.TCPAddr).Port, nil
		}
		return freePort()
	}
	p.start()
	if picks < 2 {
		t.Fatalf("the harness took the stranger's port for its redis-server (ports picked: %d)", picks)
	}
	info, err := p.Client().InfoMap(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	pid := p.cmd.Process.Pid
	p.mu.Unlock()
	if got := info["Server"]["process_id"]; got != strconv.Itoa(pid) {
		t.Errorf("INFO server process_id = %q, want the harness's redis-server, pid %d", got, pid)
	}
}
