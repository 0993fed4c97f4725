package server

import (
	"testing"

	"github.com/eddy-streams/eddy/stream"
)

// Expected texts were read from redis-server 7.0.15; tests/diff_groups_test.go
// checks the same lines against it end to end.
func TestParseXGroupOptions(t *testing.T) {
	unknown := stream.EntriesReadUnknown
	createSyntax := errSubcommandArgs([]byte("create"), "XGROUP")
	setidSyntax := errSubcommandArgs([]byte("setid"), "XGROUP")
	tests := []struct {
		line string
		want xgroupOptions
		err  string
	}{
		{line: "xgroup create s g 0", want: xgroupOptions{entriesRead: unknown}},
		{line: "xgroup create s g 0 MKSTREAM", want: xgroupOptions{mkstream: true, entriesRead: unknown}},
		{line: "xgroup create s g 0 mkstream mkstream mkstream", want: xgroupOptions{mkstream: true, entriesRead: unknown}},
		{line: "xgroup create s g 0 entriesread 5 mkstream", want: xgroupOptions{mkstream: true, entriesRead: 5}},
		{line: "xgroup create s g 0 entriesread 1 entriesread 2", want: xgroupOptions{entriesRead: 2}},
		{line: "xgroup create s g 0 ENTRIESREAD -1", want: xgroupOptions{entriesRead: unknown}},
		{line: "xgroup create s g 0 entriesread 9223372036854775807", want: xgroupOptions{entriesRead: 9223372036854775807}},
		{line: "xgroup create s g 0 entriesread", err: createSyntax},
		{line: "xgroup create s g 0 foo", err: createSyntax},
		{line: "xgroup create s g 0 entriesread -2", err: errEntriesReadRange},
		{line: "xgroup create s g 0 entriesread abc", err: errValueNotInteger},
		{line: "xgroup create s g 0 entriesread 01", err: errValueNotInteger},
		{line: "xgroup setid s g 0", want: xgroupOptions{entriesRead: unknown}},
		{line: "xgroup setid s g 0 entriesread 3", want: xgroupOptions{entriesRead: 3}},
		{line: "xgroup setid s g 0 mkstream", err: setidSyntax},
		{line: "xgroup setid s g 0 entriesread", err: setidSyntax},
		{line: "xgroup SETID s g 0 entriesread -5", err: errEntriesReadRange},
	}
	for _, tc := range tests {
		args := argv(t, tc.line)
		got, err := parseXGroupOptions(args, argIs(args[1], "create"))
		if err != tc.err || (err == "" && got != tc.want) {
			t.Errorf("%s: got %+v %q, want %+v %q", tc.line, got, err, tc.want, tc.err)
		}
	}
}

func TestParseGroupID(t *testing.T) {
	tests := []struct {
		arg    string
		strict bool
		want   stream.ID
		ok     bool
	}{
		{"0", true, stream.ID{}, true},
		{"5", true, stream.ID{Ms: 5}, true},
		{"1-2", false, stream.ID{Ms: 1, Seq: 2}, true},
		{"-", true, stream.ID{}, false},
		{"+", true, stream.ID{}, false},
		{"-", false, stream.ID{}, true},
		{"+", false, stream.MaxID, true},
		{"1-*", false, stream.ID{}, false},
		{"(1", false, stream.ID{}, false},
		{"", true, stream.ID{}, false},
	}
	for _, tc := range tests {
		got, ok := parseGroupID([]byte(tc.arg), tc.strict)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("parseGroupID(%q, strict %v) = %v, %v; want %v, %v", tc.arg, tc.strict, got, ok, tc.want, tc.ok)
		}
	}
}
