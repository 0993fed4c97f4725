package server

import (
	"reflect"
	"testing"

	"github.com/eddy-streams/eddy/stream"
)

// Expected error texts were read from redis-server 7.0.15 (see checkRedis).
func TestParseXTrim(t *testing.T) {
	tests := []struct {
		line string
		want stream.Trim
		err  string
	}{
		{line: "xtrim k maxlen 1", want: stream.Trim{Strategy: stream.TrimMaxLen, MaxLen: 1}},
		{line: "xtrim k MAXLEN = 0", want: stream.Trim{Strategy: stream.TrimMaxLen}},
		{line: "xtrim k maxlen ~ 7", want: stream.Trim{Strategy: stream.TrimMaxLen, MaxLen: 7, Approx: true}},
		{line: "xtrim k maxlen ~ 7 limit 3", want: stream.Trim{Strategy: stream.TrimMaxLen, MaxLen: 7, Approx: true, Limit: 3, LimitGiven: true}},
		{line: "xtrim k limit 0 maxlen ~ 7", want: stream.Trim{Strategy: stream.TrimMaxLen, MaxLen: 7, Approx: true, LimitGiven: true}},
		{line: "xtrim k minid 5", want: stream.Trim{Strategy: stream.TrimMinID, MinID: stream.ID{Ms: 5}}},
		{line: "xtrim k minid ~ 5-3", want: stream.Trim{Strategy: stream.TrimMinID, MinID: stream.ID{Ms: 5, Seq: 3}, Approx: true}},
		// "~" is the approx marker only when a threshold follows it.
		{line: "xtrim k maxlen ~ 1 maxlen", err: errSyntax},

		{line: "xtrim k maxlen 1 foo", err: errSyntax},
		{line: "xtrim k foo 1", err: errSyntax},
		{line: "xtrim k maxlen 1 nomkstream", err: errSyntax},
		{line: "xtrim k * 1", err: errSyntax},
		{line: "xtrim k maxlen abc", err: errValueNotInteger},
		{line: "xtrim k maxlen -1", err: errMaxLenNegative},
		{line: "xtrim k maxlen ~ x", err: errValueNotInteger},
		{line: "xtrim k maxlen =", err: errValueNotInteger},
		{line: "xtrim k maxlen ~", err: errValueNotInteger},
		{line: "xtrim k minid (5", err: errInvalidStreamID},
		{line: "xtrim k minid -", err: errInvalidStreamID},
		{line: "xtrim k minid 5-*", err: errInvalidStreamID},
		{line: "xtrim k limit 5", err: errLimitNoStrategy},
		{line: "xtrim k limit 0", err: errXTrimNoStrategy},
		{line: "xtrim k limit -1", err: errLimitNegative},
		{line: "xtrim k limit 5 maxlen 1", err: errLimitNoApprox},
		{line: "xtrim k maxlen 1 limit 5", err: errLimitNoApprox},
		{line: "xtrim k limit 0 maxlen 1", err: errLimitNoApprox},
		{line: "xtrim k minid ~ 1 limit abc", err: errValueNotInteger},
		{line: "xtrim k minid 1 maxlen 2", err: errTrimBoth},
		{line: "xtrim k maxlen 1 limit 5 foo", err: errSyntax},
	}
	for _, tt := range tests {
		checkRedis(t, nil, tt.line, tt.err)
		got, errText := parseXTrim(argv(t, tt.line))
		if errText != tt.err {
			t.Errorf("%s: error %q, want %q", tt.line, errText, tt.err)
			continue
		}
		if tt.err == "" && got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.line, got, tt.want)
		}
	}
}

// XDEL looks at the key before its IDs, so these run against an existing
// stream k.
func TestParseXDel(t *testing.T) {
	tests := []struct {
		line string
		want []stream.ID
		err  string
	}{
		{line: "xdel k 1-1", want: []stream.ID{{Ms: 1, Seq: 1}}},
		{line: "xdel k 2 3-4 2", want: []stream.ID{{Ms: 2}, {Ms: 3, Seq: 4}, {Ms: 2}}},
		{line: "xdel k abc", err: errInvalidStreamID},
		{line: "xdel k 1-1 abc", err: errInvalidStreamID},
		{line: "xdel k -", err: errInvalidStreamID},
		{line: "xdel k +", err: errInvalidStreamID},
		{line: "xdel k 3-*", err: errInvalidStreamID},
		{line: "xdel k (3", err: errInvalidStreamID},
	}
	for _, tt := range tests {
		checkRedis(t, []string{"xadd k 1-1 f v"}, tt.line, tt.err)
		got, errText := parseXDel(argv(t, tt.line))
		if errText != tt.err {
			t.Errorf("%s: error %q, want %q", tt.line, errText, tt.err)
			continue
		}
		if tt.err == "" && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.line, got, tt.want)
		}
	}
}

// Expected error texts were read from redis-server 7.0.15, against an
// absent key: every option check comes before the key's.
func TestParseXSetID(t *testing.T) {
	md := func(ms, seq uint64) *stream.ID { return &stream.ID{Ms: ms, Seq: seq} }
	tests := []struct {
		line string
		want stream.XSetIDArgs
		err  string
	}{
		{line: "xsetid k 5-5", want: stream.XSetIDArgs{ID: stream.ID{Ms: 5, Seq: 5}, EntriesAdded: -1}, err: errNoSuchKey},
		{line: "xsetid k 5", want: stream.XSetIDArgs{ID: stream.ID{Ms: 5}, EntriesAdded: -1}, err: errNoSuchKey},
		{line: "xsetid k 5-5 entriesadded 0", want: stream.XSetIDArgs{ID: stream.ID{Ms: 5, Seq: 5}}, err: errNoSuchKey},
		{line: "xsetid k 5-5 ENTRIESADDED 1 entriesadded 7", want: stream.XSetIDArgs{ID: stream.ID{Ms: 5, Seq: 5}, EntriesAdded: 7}, err: errNoSuchKey},
		{line: "xsetid k 5-5 maxdeletedid 5-5", want: stream.XSetIDArgs{ID: stream.ID{Ms: 5, Seq: 5}, EntriesAdded: -1, MaxDeleted: md(5, 5)}, err: errNoSuchKey},
		{line: "xsetid k 5-5 maxdeletedid 0-0 entriesadded 3", want: stream.XSetIDArgs{ID: stream.ID{Ms: 5, Seq: 5}, EntriesAdded: 3, MaxDeleted: md(0, 0)}, err: errNoSuchKey},

		{line: "xsetid k abc", err: errInvalidStreamID},
		{line: "xsetid k -", err: errInvalidStreamID},
		{line: "xsetid k +", err: errInvalidStreamID},
		{line: "xsetid k 5-*", err: errInvalidStreamID},
		{line: "xsetid k 5-5 foo", err: errSyntax},
		{line: "xsetid k 5-5 entriesadded", err: errSyntax},
		{line: "xsetid k 5-5 entriesadded abc", err: errValueNotInteger},
		{line: "xsetid k 5-5 entriesadded -1", err: errEntriesAddedNegative},
		{line: "xsetid k 5-5 maxdeletedid abc", err: errInvalidStreamID},
		{line: "xsetid k 5-5 maxdeletedid 6-0", err: errXSetIDMaxDel},
		{line: "xsetid k 5-5 maxdeletedid 5-6", err: errXSetIDMaxDel},
		{line: "xsetid k 5-5 maxdeletedid 6-0 foo", err: errXSetIDMaxDel},
		{line: "xsetid k 5-5 entriesadded 1 foo", err: errSyntax},
		{line: "xsetid k 5-5 foo entriesadded -1", err: errSyntax},
	}
	for _, tt := range tests {
		checkRedis(t, nil, tt.line, tt.err)
		got, errText := parseXSetID(argv(t, tt.line))
		if errText == "" {
			// Parsed fine: the reply comes from the absent key.
			errText = errNoSuchKey
		}
		if errText != tt.err {
			t.Errorf("%s: error %q, want %q", tt.line, errText, tt.err)
			continue
		}
		if tt.err == errNoSuchKey && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.line, got, tt.want)
		}
	}
}

// TestStreamWriteReplies compares whole replies with what redis-server
// 7.0.15 sent for the same lines.
func TestStreamWriteReplies(t *testing.T) {
	h := newStreamHarness(t, 2)
	h.expect("xadd s 0-0 f v", "-ERR The ID specified in XADD must be greater than 0-0\r\n")
	h.expect("xadd s 0-* f v", "$3\r\n0-1\r\n")
	h.expect("xadd s 0-* f v", "$3\r\n0-2\r\n")
	h.expect("xadd s 5 f v", "$3\r\n5-0\r\n")
	h.expect("xadd s 5-* f v", "$3\r\n5-1\r\n")
	h.expect("xadd s 5-1 f v", "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n")
	h.expect("xadd s 4-9 f v", "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n")
	h.expect("xadd nokey nomkstream 1-1 f v", "$-1\r\n")
	h.expect("xlen nokey", ":0\r\n")
	h.expect("xadd s maxlen 2 9-1 f v", "$3\r\n9-1\r\n")
	h.expect("xlen s", ":2\r\n")
	h.expect("xrange s - +", "*2\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$3\r\n9-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
	h.expect("xadd s minid 9-1 10-1 f v", "$4\r\n10-1\r\n")
	h.expect("xrange s - +", "*2\r\n*2\r\n$3\r\n9-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$4\r\n10-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
	h.expect("xadd s 18446744073709551615-18446744073709551615 f v", "$41\r\n18446744073709551615-18446744073709551615\r\n")
	h.expect("xadd s 18446744073709551615-* f v", "-ERR The stream has exhausted the last possible ID, unable to add more items\r\n")
	h.expect("xlen s", ":3\r\n")
	h.expect("xdel nokey abc", ":0\r\n")
	h.expect("xdel s abc", "-ERR Invalid stream ID specified as stream command argument\r\n")
	h.expect("xdel s 10-1 10-1 3-3", ":1\r\n")
	h.expect("xlen s", ":2\r\n")
	h.expect("xtrim nokey maxlen 0", ":0\r\n")
	h.expect("xtrim s maxlen 0", ":2\r\n")
	h.expect("xlen s", ":0\r\n")
	h.expect("xsetid nokey 1-1", "-ERR no such key\r\n")
	h.expect("xsetid s 1-1", "+OK\r\n")
	h.expect("xadd t 1-1 a 1", "$3\r\n1-1\r\n")
	h.expect("xadd t 2-1 a 1", "$3\r\n2-1\r\n")
	h.expect("xsetid t 1-5", "-ERR The ID specified in XSETID is smaller than the target stream top item\r\n")
	h.expect("xsetid t 3-0 entriesadded 1", "-ERR The entries_added specified in XSETID is smaller than the target stream length\r\n")
	h.expect("xsetid t 3-0 entriesadded 9 maxdeletedid 2-5", "+OK\r\n")
	h.expect("xinfo stream t", "*20\r\n$6\r\nlength\r\n:2\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n2-5\r\n$13\r\nentries-added\r\n:9\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")
	h.expect("xadd t 3-* a 1", "$3\r\n3-1\r\n")
	h.expect("xtrim t minid 3", ":2\r\n")
	h.expect("xrange t - +", "*1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")
}

func TestXAddNoMkStreamRESP3(t *testing.T) {
	h := newStreamHarness(t, 3)
	h.expect("xadd nokey nomkstream 1-1 f v", "_\r\n")
	h.expect("xadd s nomkstream 1-1 f v", "_\r\n")
	h.expect("xadd s 1-1 f v", "$3\r\n1-1\r\n")
	h.expect("xadd s nomkstream 2-1 f v", "$3\r\n2-1\r\n")
}
