package server

import "testing"

// XINFO STREAM reads its options after finding the stream, so these run
// against an existing stream k. Texts from redis-server 7.0.15.
func TestParseXInfoStream(t *testing.T) {
	tests := []struct {
		line string
		want xinfoStreamArgs
		err  string
	}{
		{line: "xinfo stream k", want: xinfoStreamArgs{}},
		{line: "xinfo stream k full", want: xinfoStreamArgs{full: true, count: 10}},
		{line: "xinfo STREAM k FULL COUNT 2", want: xinfoStreamArgs{full: true, count: 2}},
		{line: "xinfo stream k full count 0", want: xinfoStreamArgs{full: true, count: 0}},
		{line: "xinfo stream k full count -1", want: xinfoStreamArgs{full: true, count: 10}},

		{line: "xinfo stream k full count abc", err: errValueNotInteger},
		{line: "xinfo stream k full count", err: errSubcommandArgs([]byte("stream"), "XINFO")},
		{line: "xinfo stream k full foo 1", err: errSubcommandArgs([]byte("stream"), "XINFO")},
		{line: "xinfo stream k foo", err: errSubcommandArgs([]byte("stream"), "XINFO")},
		{line: "xinfo STREAM k Foo", err: errSubcommandArgs([]byte("STREAM"), "XINFO")},
		{line: "xinfo stream k full count 1 x", err: errSubcommandArgs([]byte("stream"), "XINFO")},
	}
	for _, tt := range tests {
		checkRedis(t, []string{"xadd k 1-1 f v"}, tt.line, tt.err)
		got, errText := parseXInfoStream(argv(t, tt.line))
		if errText != tt.err {
			t.Errorf("%s: error %q, want %q", tt.line, errText, tt.err)
			continue
		}
		if tt.err == "" && got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.line, got, tt.want)
		}
	}
}

func TestXInfoErrorTexts(t *testing.T) {
	if got, want := errSubcommandArgs([]byte("STREAM"), "XINFO"),
		"ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	checkRedis(t, []string{"xadd s 1-1 f v"}, "xinfo consumers s Gx", errNoGroup([]byte("Gx"), []byte("s")))
	checkRedis(t, []string{"xadd s 1-1 f v"}, `xinfo consumers s "a\r\nb"`, errNoGroup([]byte("a\r\nb"), []byte("s")))
	if got, want := errNoGroup([]byte("a\r\nb\x00c"), []byte("s")),
		"NOGROUP No such consumer group 'a  b' for key name 's'"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestXInfoReplies compares whole replies with what redis-server 7.0.15
// sent for the same lines.
func TestXInfoReplies(t *testing.T) {
	h := newStreamHarness(t, 2)
	h.expect("xinfo stream nokey", "-ERR no such key\r\n")
	h.expect("xinfo groups nokey", "-ERR no such key\r\n")
	h.expect("xinfo consumers nokey g", "-ERR no such key\r\n")
	h.expect("xadd s 1-1 a 1", "$3\r\n1-1\r\n")
	h.expect("xadd s 2-1 b 2", "$3\r\n2-1\r\n")
	h.expect("xadd s 3-1 c 3", "$3\r\n3-1\r\n")
	h.expect("xinfo stream s", "*20\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xinfo stream s full", "*18\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$7\r\nentries\r\n*3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n$6\r\ngroups\r\n*0\r\n")
	h.expect("xinfo stream s full count 1", "*18\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$7\r\nentries\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n$6\r\ngroups\r\n*0\r\n")
	h.expect("xinfo stream nokey full count x", "-ERR no such key\r\n")
	h.expect("xinfo stream s full count x", "-ERR value is not an integer or out of range\r\n")
	h.expect("xinfo stream s foo", "-ERR unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP.\r\n")
	h.expect("xinfo groups s", "*0\r\n")
	h.expect("xinfo consumers s g", "-NOGROUP No such consumer group 'g' for key name 's'\r\n")
	h.expect("xinfo help", "*9\r\n+XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+CONSUMERS <key> <groupname>\r\n+    Show consumers of <groupname>.\r\n+GROUPS <key>\r\n+    Show the stream consumer groups.\r\n+STREAM <key> [FULL [COUNT <count>]\r\n+    Show information about the stream.\r\n+HELP\r\n+    Prints this help.\r\n")
	h.expect("xdel s 1-1 2-1 3-1", ":3\r\n")
	h.expect("xinfo stream s", "*20\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n3-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n3-1\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n")
	h.expect("xinfo stream s full", "*18\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n3-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n3-1\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$7\r\nentries\r\n*0\r\n$6\r\ngroups\r\n*0\r\n")
}

func TestXInfoRepliesRESP3(t *testing.T) {
	h := newStreamHarness(t, 3)
	h.expect("xinfo stream nokey", "-ERR no such key\r\n")
	h.expect("xinfo groups nokey", "-ERR no such key\r\n")
	h.expect("xinfo consumers nokey g", "-ERR no such key\r\n")
	h.expect("xadd s 1-1 a 1", "$3\r\n1-1\r\n")
	h.expect("xadd s 2-1 b 2", "$3\r\n2-1\r\n")
	h.expect("xadd s 3-1 c 3", "$3\r\n3-1\r\n")
	h.expect("xinfo stream s", "%10\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xinfo stream s full", "%9\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$7\r\nentries\r\n*3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n$6\r\ngroups\r\n*0\r\n")
	h.expect("xinfo stream s full count 1", "%9\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$7\r\nentries\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n$6\r\ngroups\r\n*0\r\n")
	h.expect("xinfo stream nokey full count x", "-ERR no such key\r\n")
	h.expect("xinfo stream s full count x", "-ERR value is not an integer or out of range\r\n")
	h.expect("xinfo stream s foo", "-ERR unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP.\r\n")
	h.expect("xinfo groups s", "*0\r\n")
	h.expect("xinfo consumers s g", "-NOGROUP No such consumer group 'g' for key name 's'\r\n")
	h.expect("xinfo help", "*9\r\n+XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+CONSUMERS <key> <groupname>\r\n+    Show consumers of <groupname>.\r\n+GROUPS <key>\r\n+    Show the stream consumer groups.\r\n+STREAM <key> [FULL [COUNT <count>]\r\n+    Show information about the stream.\r\n+HELP\r\n+    Prints this help.\r\n")
	h.expect("xdel s 1-1 2-1 3-1", ":3\r\n")
	h.expect("xinfo stream s", "%10\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n3-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n3-1\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n_\r\n$10\r\nlast-entry\r\n_\r\n")
	h.expect("xinfo stream s full", "%9\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n3-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n3-1\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$7\r\nentries\r\n*0\r\n$6\r\ngroups\r\n*0\r\n")
}
