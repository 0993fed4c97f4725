package server

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/stream"
)

func TestParseXReadGroup(t *testing.T) {
	id := func(ms, seq uint64) xreadGroupID { return xreadGroupID{id: stream.ID{Ms: ms, Seq: seq}} }
	gt := xreadGroupID{newOnly: true}
	tests := []struct {
		line string
		want xreadGroupArgs // group "g", consumer "c" and keys filled in
		keys string
		err  string
	}{
		{line: "xreadgroup group g c streams s >", keys: "s", want: xreadGroupArgs{ids: []xreadGroupID{gt}}},
		{line: "xreadgroup group g c count 10 block 0 noack streams s t > 1-2", keys: "s t",
			want: xreadGroupArgs{count: 10, block: true, noAck: true, ids: []xreadGroupID{gt, id(1, 2)}}},
		{line: "xreadgroup GROUP x y GROUP g c streams s 0", keys: "s", want: xreadGroupArgs{ids: []xreadGroupID{id(0, 0)}}},
		{line: "xreadgroup group g c count -3 streams s 5", keys: "s", want: xreadGroupArgs{ids: []xreadGroupID{id(5, 0)}}},
		{line: "xreadgroup group g c block 9223372036854775807 streams s >", keys: "s",
			want: xreadGroupArgs{block: true, timeout: math.MaxInt64, ids: []xreadGroupID{gt}}},
		{line: "xreadgroup group g c streams s $", keys: "s", want: xreadGroupArgs{ids: []xreadGroupID{{errText: errXReadGroupDollar}}}},
		{line: "xreadgroup group g c streams s -", keys: "s", want: xreadGroupArgs{ids: []xreadGroupID{{errText: errInvalidStreamID}}}},
		{line: "xreadgroup group g c streams s bad", keys: "s", want: xreadGroupArgs{ids: []xreadGroupID{{errText: errInvalidStreamID}}}},
		{line: "xreadgroup group g c streams s t >", err: errXReadUnbalanced},
		{line: "xreadgroup count 1 streams s > x y", err: errXReadGroupMissing},
		{line: "xreadgroup group g c foo streams s 0", err: errSyntax},
		{line: "xreadgroup group g c count 1 block 1 noack", err: errSyntax},
		{line: "xreadgroup group g c count x streams s >", err: errValueNotInteger},
		{line: "xreadgroup group g c block x streams s >", err: errTimeoutNotInteger},
		{line: "xreadgroup group g c block -1 streams s >", err: errTimeoutNegative},
		// GROUP takes "streams" and "s" as its names; ">" is then no option.
		{line: "xreadgroup group g streams s > x", err: errSyntax},
	}
	for _, tc := range tests {
		got, err := parseXReadGroup(argv(t, tc.line))
		if err != tc.err {
			t.Errorf("%s: error %q, want %q", tc.line, err, tc.err)
			continue
		}
		if err != "" {
			continue
		}
		want := tc.want
		want.group, want.consumer = []byte("g"), []byte("c")
		for _, k := range strings.Fields(tc.keys) {
			want.keys = append(want.keys, []byte(k))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.line, got, want)
		}
	}
}

func TestWriteXReadGroupDeletedEntry(t *testing.T) {
	rs := []xreadResult{{key: []byte("s"), entries: []stream.Entry{
		{ID: stream.ID{Ms: 1}},
		{ID: stream.ID{Ms: 2}, Fields: [][]byte{[]byte("f"), []byte("v")}},
	}}}
	for _, tc := range []struct {
		proto int
		want  string
	}{
		{2, "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*-1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
		{3, "%1\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-0\r\n_\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
	} {
		w := &replyWriter{proto: tc.proto}
		writeXRead(w, rs)
		if string(w.buf) != tc.want {
			t.Errorf("RESP%d: %q, want %q", tc.proto, w.buf, tc.want)
		}
	}
}
