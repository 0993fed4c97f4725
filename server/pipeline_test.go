package server

import (
	"strings"
	"testing"

	"github.com/tidwall/redcon"
)

// resp encodes commands (space-separated words) as one RESP pipeline.
func resp(cmds ...string) string {
	var b strings.Builder
	for _, c := range cmds {
		args := strings.Fields(c)
		b.WriteString("*" + itoa(int64(len(args))) + "\r\n")
		for _, a := range args {
			b.WriteString("$" + itoa(int64(len(a))) + "\r\n" + a + "\r\n")
		}
	}
	return b.String()
}

// TestPipelineGroups: a pipeline's writes give the replies and the state
// that running its commands one by one gives, whatever grouping did.
func TestPipelineGroups(t *testing.T) {
	tests := []struct {
		name  string
		cmds  []string
		want  []string
		after [][2]string // command, reply checked afterwards on a new connection
	}{
		{
			name: "writes",
			cmds: []string{"XADD s 1-1 f v", "XADD s 2-1 f v", "SET k v", "INCR n", "XLEN s"},
			want: []string{"$3\r\n1-1\r\n", "$3\r\n2-1\r\n", "+OK\r\n", ":1\r\n", ":2\r\n"},
		},
		{
			// The failing XADD leaves nothing; the others keep theirs.
			name: "error in the middle",
			cmds: []string{"XADD s 1-1 f v", "XADD s 1-1 f v", "XADD s 2-1 f v", "INCR k", "XADD s 3-1 f v"},
			want: []string{"$3\r\n1-1\r\n", "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n",
				"$3\r\n2-1\r\n", ":1\r\n", "$3\r\n3-1\r\n"},
			after: [][2]string{{"XLEN s", ":3\r\n"}, {"GET k", "$1\r\n1\r\n"}},
		},
		{
			name: "wrong type",
			cmds: []string{"SET k v", "XADD k 1-1 f v", "INCR k", "SET k 5", "INCR k"},
			want: []string{"+OK\r\n", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
				"-ERR value is not an integer or out of range\r\n", "+OK\r\n", ":6\r\n"},
		},
		{
			name: "multi ends a group",
			cmds: []string{"XADD s 1-1 f v", "XADD s 2-1 f v", "MULTI", "XADD s 3-1 f v", "XADD s 4-1 f v", "EXEC", "XADD s 5-1 f v", "XADD s 6-1 f v"},
			want: []string{"$3\r\n1-1\r\n", "$3\r\n2-1\r\n", "+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n",
				"*2\r\n$3\r\n3-1\r\n$3\r\n4-1\r\n", "$3\r\n5-1\r\n", "$3\r\n6-1\r\n"},
		},
		{
			name: "select ends a group",
			cmds: []string{"XADD s 1-1 f v", "SELECT 1", "XADD s 1-1 f v", "XADD s 2-1 f v", "SELECT 0", "XLEN s"},
			want: []string{"$3\r\n1-1\r\n", "+OK\r\n", "$3\r\n1-1\r\n", "$3\r\n2-1\r\n", "+OK\r\n", ":1\r\n"},
		},
		{
			name: "arity error",
			cmds: []string{"XADD s 1-1 f v", "XADD s", "XADD s 2-1 f v"},
			want: []string{"$3\r\n1-1\r\n", "-ERR wrong number of arguments for 'xadd' command\r\n", "$3\r\n2-1\r\n"},
		},
		{
			// XREADGROUP without BLOCK joins a group.
			name: "xreadgroup",
			cmds: []string{"XADD s 1-1 f v", "XADD s 2-1 f v", "XGROUP CREATE s g 0",
				"XREADGROUP GROUP g c COUNT 1 STREAMS s >", "XREADGROUP GROUP g c COUNT 1 STREAMS s >",
				"XACK s g 1-1", "XREADGROUP GROUP g c STREAMS s 0"},
			want: []string{"$3\r\n1-1\r\n", "$3\r\n2-1\r\n", "+OK\r\n",
				"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
				"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
				":1\r\n",
				"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"},
		},
		{
			// A failing XREADGROUP replays its group one by one.
			name:  "xreadgroup without its group",
			cmds:  []string{"XADD s 1-1 f v", "XREADGROUP GROUP nog c STREAMS s >", "XADD s 2-1 f v"},
			want:  []string{"$3\r\n1-1\r\n", "-" + errNoGroupRead([]byte("s"), []byte("nog")) + "\r\n", "$3\r\n2-1\r\n"},
			after: [][2]string{{"XLEN s", ":2\r\n"}},
		},
		{
			// QUIT closes the connection: what follows it never runs.
			name:  "quit",
			cmds:  []string{"XADD s 1-1 f v", "XADD s 2-1 f v", "QUIT", "XADD s 3-1 f v", "XADD s 4-1 f v"},
			want:  []string{"$3\r\n1-1\r\n", "$3\r\n2-1\r\n", "+OK\r\n"},
			after: [][2]string{{"XLEN s", ":2\r\n"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t)
			r := dialRaw(t, s)
			r.send(resp(tt.cmds...))
			for i, want := range tt.want {
				if got := r.reply(); got != want {
					t.Errorf("reply %d (%s): got %q, want %q", i, tt.cmds[i], got, want)
				}
			}
			r2 := dialRaw(t, s)
			for _, a := range tt.after {
				r2.expect(a[1], strings.Fields(a[0])...)
			}
		})
	}
}

// TestPipelineGroupShares: consecutive pipelined writes run as one group,
// counted once each in commandstats, and a failed group's error is counted
// once in errorstats.
func TestPipelineGroupShares(t *testing.T) {
	s := startServer(t)
	r := dialRaw(t, s)
	cmds := make([]string, 16)
	for i := range cmds {
		cmds[i] = "XADD s * f v"
	}
	r.send(resp(cmds...))
	for range cmds {
		if got := r.reply(); got[0] != '$' {
			t.Fatalf("got %q", got)
		}
	}
	if s.stats.writeGroups.Load() == 0 {
		t.Skip("the pipeline did not arrive in one read")
	}
	r.send(resp("XADD s 1-1 f v", "XADD s * f v"))
	r.reply()
	r.reply()
	r.cmd("INFO", "commandstats")
	if got := r.reply(); !strings.Contains(got, "cmdstat_xadd:calls=18,") {
		t.Errorf("commandstats: %q", got)
	}
	r.cmd("INFO", "errorstats")
	if got := r.reply(); !strings.Contains(got, "errorstat_ERR:count=1\r\n") {
		t.Errorf("errorstats: %q", got)
	}
}

// TestPipelineBlocked: the commands after one that blocks wait for it,
// then run in order.
func TestPipelineBlocked(t *testing.T) {
	s := startServer(t)
	r := dialRaw(t, s)
	r.send(resp("XADD s 1-1 f v", "XADD s 2-1 f v", "XREAD BLOCK 0 STREAMS t $", "XADD s 3-1 f v", "XADD s 4-1 f v"))
	for _, want := range []string{"$3\r\n1-1\r\n", "$3\r\n2-1\r\n"} {
		if got := r.reply(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	waitFor(t, func() bool { return s.blocks.count() == 1 })
	w := dialRaw(t, s)
	w.expect("$3\r\n9-1\r\n", "XADD", "t", "9-1", "g", "h")
	for _, want := range []string{
		"*1\r\n*2\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n9-1\r\n*2\r\n$1\r\ng\r\n$1\r\nh\r\n",
		"$3\r\n3-1\r\n", "$3\r\n4-1\r\n",
	} {
		if got := r.reply(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

// TestRunGroupsAcrossClients: the event loop runs the writes of several
// clients in one transaction; the replies and the state are those of
// running them one by one, client after client, also when one fails.
func TestRunGroupsAcrossClients(t *testing.T) {
	tests := []struct {
		name     string
		setup    []string   // run first, on a connection of their own
		clients  [][]string // each client's commands
		want     []string   // each client's replies, concatenated
		xlen     string
		follower bool // the server became a replica after the group was formed
	}{
		{
			name:    "all succeed",
			clients: [][]string{{"XADD s 1-1 f v", "XADD s 2-1 f v"}, {"XADD s 3-1 f v"}, {"INCR n"}},
			want:    []string{"$3\r\n1-1\r\n$3\r\n2-1\r\n", "$3\r\n3-1\r\n", ":1\r\n"},
			xlen:    ":3\r\n",
		},
		{
			// The second client's XADD is refused because of the first
			// client's, which ran before it: the group is replayed and
			// each keeps what running alone gives it.
			name:    "one fails",
			clients: [][]string{{"XADD s 5-1 f v"}, {"XADD s 1-1 f v", "XADD s 6-1 f v"}, {"XADD s 7-1 f v"}},
			want: []string{"$3\r\n5-1\r\n",
				"-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n$3\r\n6-1\r\n",
				"$3\r\n7-1\r\n"},
			xlen: ":3\r\n",
		},
		{
			// Each reader gets what running after the one before it
			// leaves: the next entry.
			name:    "group readers",
			setup:   []string{"XADD s 1-1 f v", "XADD s 2-1 f v", "XGROUP CREATE s g 0"},
			clients: [][]string{{"XREADGROUP GROUP g a COUNT 1 STREAMS s >"}, {"XREADGROUP GROUP g b COUNT 1 STREAMS s >", "XACK s g 1-1 2-1"}},
			want: []string{"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
				"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n:2\r\n"},
			xlen: ":2\r\n",
		},
		{
			name:     "now a replica",
			clients:  [][]string{{"XADD s 1-1 f v"}, {"INCR n"}},
			want:     []string{"-" + errReadOnlyReplica + "\r\n", "-" + errReadOnlyReplica + "\r\n"},
			xlen:     ":0\r\n",
			follower: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t)
			if len(tt.setup) > 0 {
				r := dialRaw(t, s)
				r.send(resp(tt.setup...))
				for range tt.setup {
					r.reply()
				}
			}
			var parts []groupPart
			for i, cmds := range tt.clients {
				c := &client{s: s, id: int64(i + 1), proto: 2, inMulti: -1, unblockCh: make(chan unblockRequest, 1)}
				c.w.proto = 2
				c.w.stats = &s.stats
				c.authed.Store(true)
				p := groupPart{c: c}
				for _, line := range cmds {
					var args [][]byte
					for _, f := range strings.Fields(line) {
						args = append(args, []byte(f))
					}
					spec := s.groupable(c, args)
					if spec == nil {
						t.Fatalf("%q is not groupable", line)
					}
					p.cmds = append(p.cmds, redcon.Command{Args: args})
					p.specs = append(p.specs, spec)
				}
				parts = append(parts, p)
			}
			before := s.stats.commands.Load()
			s.engine.SetFollower(tt.follower)
			s.runGroups(parts)
			s.engine.SetFollower(false)
			for i, p := range parts {
				if got := string(p.c.w.buf); got != tt.want[i] {
					t.Errorf("client %d: got %q, want %q", i+1, got, tt.want[i])
				}
			}
			n := int64(0)
			for _, cmds := range tt.clients {
				n += int64(len(cmds))
			}
			if tt.follower {
				n = 0 // refused before they run
			}
			if got := s.stats.commands.Load() - before; got != n {
				t.Errorf("commands counted: %d, want %d", got, n)
			}
			r := dialRaw(t, s)
			r.expect(tt.xlen, "XLEN", "s")
		})
	}
}

func TestMayBlock(t *testing.T) {
	tests := []struct {
		req  string
		want bool
	}{
		{"XREADGROUP GROUP g c STREAMS s >", false},
		{"XREADGROUP GROUP g c COUNT 10 NOACK STREAMS s >", false},
		{"XREADGROUP GROUP g c BLOCK 0 STREAMS s >", true},
		{"XREADGROUP GROUP g c COUNT 1 block 100 STREAMS s >", true},
		{"XREADGROUP GROUP g c BLOCK x STREAMS s >", false}, // refused by the handler
		{"XREADGROUP GROUP g c STREAMS s BLOCK >", false},   // "BLOCK" is a key there
	}
	for _, tt := range tests {
		var args [][]byte
		for _, f := range strings.Fields(tt.req) {
			args = append(args, []byte(f))
		}
		if got := mayBlock(args); got != tt.want {
			t.Errorf("mayBlock(%s) = %v, want %v", tt.req, got, tt.want)
		}
	}
}
