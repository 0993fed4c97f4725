package main

import (
	"bytes"
	"context"
	"regexp"
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
		{[]string{"version", "extra"}, exitUsage, "", `unexpected argument "extra"`},
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
