package tests

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The nats CLI (github.com/nats-io/natscli, installed by .ci/run) against
// Eddy's bridge and against a real nats-server holding the same entries:
// the same commands, the same output once times are masked.

// natsCLI returns the path of the nats CLI. Without one the test is
// skipped, except in CI (CI=true), where it fails.
func natsCLI(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("nats")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the nats CLI is not on PATH (required in CI; .ci/run installs it): %v", err)
		}
		t.Skipf("the nats CLI is not on PATH (go install github.com/nats-io/natscli/nats@v0.5.0): %v", err)
	}
	return path
}

// cliTimes matches what differs between two runs of the same command:
// dates, times of day, durations, and the name of the server that answers
// as the stream's leader.
var cliTimes = regexp.MustCompile(`Leader: \S+|` + `\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?( [+-]\d{4} UTC)?|\(\d+(\.\d+)?(ns|µs|ms|s|m|h)\)|\d+(\.\d+)?(ns|µs|ms|s)\b`)

// runCLI runs the nats CLI against url, without any stored context.
func runCLI(t *testing.T, cli, url string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, append([]string{"--server", url, "--no-context", "--timeout", "5s"}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestNATSCLIDiff(t *testing.T) {
	cli := natsCLI(t)
	eddy, eurl := startEddyNATS(t)
	truth := startNATS(t, true)
	rurl := truth.ClientURL()
	ctx := context.Background()
	c := eddy.Client()

	// The same data in both: a KV bucket and a plain stream.
	runCLI(t, cli, rurl, "kv", "add", "cfg", "--history", "64")
	runCLI(t, cli, rurl, "stream", "add", "orders", "--subjects", "orders", "--allow-direct", "--defaults")
	for _, kv := range [][2]string{{"color", "red"}, {"color", "blue"}, {"size", "XL"}} {
		runCLI(t, cli, rurl, "kv", "put", "cfg", kv[0], kv[1])
		if err := c.Do(ctx, "XADD", "KV_cfg", "*", "subject", "$KV.cfg."+kv[0], "data", kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Messages with and without headers: the stream's bytes count both.
	runCLI(t, cli, rurl, "pub", "orders", "hello")
	// One header only: the CLI publishes several in its map's (random) order.
	runCLI(t, cli, rurl, "pub", "orders", "again", "-H", "Order-Id:42")
	for _, fields := range [][]any{{"data", "hello"}, {"data", "again", "Order-Id", "42"}} {
		if err := c.Do(ctx, append([]any{"XADD", "orders", "*"}, fields...)...).Err(); err != nil {
			t.Fatal(err)
		}
	}

	for _, args := range [][]string{
		{"kv", "get", "cfg", "color", "--raw"},
		{"kv", "get", "cfg", "color"},
		{"kv", "get", "cfg", "color", "--revision", "1", "--raw"},
		{"kv", "history", "cfg", "color"},
		{"kv", "ls", "cfg"},
		{"stream", "get", "orders", "1"},
		{"stream", "get", "orders", "2"},
		{"stream", "get", "KV_cfg", "2"},
		{"stream", "get", "KV_cfg", "--last-for", "$KV.cfg.size"},
		{"stream", "state", "orders"},
		{"stream", "subjects", "KV_cfg"},
		{"kv", "status", "cfg"},
		{"kv", "ls"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			want := cliTimes.ReplaceAllString(runCLI(t, cli, rurl, args...), "<time>")
			got := cliTimes.ReplaceAllString(runCLI(t, cli, eurl, args...), "<time>")
			if got != want {
				t.Fatalf("nats %s\neddy:\n%s\nnats-server:\n%s", strings.Join(args, " "), got, want)
			}
			t.Logf("nats %s:\n%s", strings.Join(args, " "), got)
		})
	}
}
