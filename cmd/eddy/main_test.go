package main

import (
	"bytes"
	"context"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func runForTest(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, env{strings.NewReader(""), &out, &errb})
	return code, out.String(), errb.String()
}

func TestRunDispatch(t *testing.T) {
	tests := []struct {
		args       []string
		wantCode   int
		wantStdout string // regexp; "" means must be empty
		wantStderr string // regexp; "" means must be empty
	}{
		{nil, exitUsage, "", `(?s)^Usage: eddy <subcommand>.*server.*version.*help`},
		{[]string{"frobnicate"}, exitUsage, "", `(?s)^eddy: unknown subcommand "frobnicate"\n\nUsage: eddy`},
		{[]string{"help"}, exitOK, `(?s)^Usage: eddy <subcommand>`, ""},
		{[]string{"--help"}, exitOK, `(?s)^Usage: eddy <subcommand>`, ""},
		{[]string{"help", "server"}, exitOK, `(?s)^Usage: eddy server.*--appendfsync\s+everysec\s+\*`, ""},
		{[]string{"version"}, exitOK, `^eddy dev \(go1\.\d+[^)]*\)\n$`, ""},
		{[]string{"--version"}, exitOK, `^eddy dev \(go1\.\d+[^)]*\)\n$`, ""},
		{[]string{"-v"}, exitOK, `^eddy dev \(go1\.\d+[^)]*\)\n$`, ""},
		{[]string{"version", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"--version", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"server", "--help"}, exitOK, `(?s)^Usage: eddy server.*--port\s+6379`, ""},
		{[]string{"server", "--port", "abc"}, exitUsage, "", `(?m)^eddy server: flag --port: bad value "abc" for directive "port": argument couldn't be parsed into an integer$`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runForTest(t, tt.args...)
		if code != tt.wantCode {
			t.Errorf("eddy %q: exit code %d, want %d (stderr %q)", tt.args, code, tt.wantCode, stderr)
		}
		check := func(what, got, want string) {
			if want == "" {
				if got != "" {
					t.Errorf("eddy %q: %s = %q, want empty", tt.args, what, got)
				}
				return
			}
			if !regexp.MustCompile(want).MatchString(got) {
				t.Errorf("eddy %q: %s = %q, want match for %q", tt.args, what, got, want)
			}
		}
		check("stdout", stdout, tt.wantStdout)
		check("stderr", stderr, tt.wantStderr)
	}
}

// A version stamped at build time wins; without one, the module version
// the go command recorded, unless it is only "(devel)"; else "dev".
func TestResolveVersion(t *testing.T) {
	withMain := func(v string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/eddy-streams/eddy", Version: v}}
	}
	tests := []struct {
		stamped string
		bi      *debug.BuildInfo
		want    string
	}{
		{"v1.2.3", withMain("v0.0.0-20261203062018-4302003abcde"), "v1.2.3"},
		{"4302003-dirty", nil, "4302003-dirty"},
		{"", withMain("v0.0.0-20261203062018-4302003abcde+dirty"), "v0.0.0-20261203062018-4302003abcde+dirty"},
		{"", withMain("(devel)"), "dev"},
		{"", withMain(""), "dev"},
		{"", nil, "dev"},
	}
	for _, tt := range tests {
		if got := resolveVersion(tt.stamped, tt.bi); got != tt.want {
			t.Errorf("resolveVersion(%q, %v) = %q, want %q", tt.stamped, tt.bi, got, tt.want)
		}
	}
}
