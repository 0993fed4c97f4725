package tests

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestCommandDocsMatchRedis asks both servers for COMMAND INFO and COMMAND
// DOCS of every command Eddy registers, containers and subcommands alike,
// in RESP2 and RESP3, and wants the same bytes: redis-cli builds its hints
// from COMMAND DOCS and client libraries route by COMMAND INFO's key specs.
// A command Redis 7.0 does not have (CLIENT SETINFO is 7.2's) is skipped,
// and a container (CLIENT, CONFIG) is compared on the subcommands Eddy has.
func TestCommandDocsMatchRedis(t *testing.T) {
	d := newDiffPair(t)
	names := commandNames(t, d.subCtl)
	if len(names) < 50 {
		t.Fatalf("COMMAND LIST gave only %d names", len(names))
	}
	// A container is compared on the subcommands both servers have.
	refNames := map[string]bool{}
	for _, n := range commandNames(t, d.refCtl) {
		refNames[n] = true
	}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = refNames[n]
	}
	for _, proto := range []string{"2", "3"} {
		ref, sub := dialRaw(t, d.ref.Addr()), dialRaw(t, d.sub.Addr())
		for _, c := range []*rawConn{ref, sub} {
			if _, err := c.Do("HELLO", proto); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range names {
			for _, what := range []string{"INFO", "DOCS"} {
				refReply, err := ref.Do("COMMAND", what, name)
				if err != nil {
					t.Fatalf("redis COMMAND %s %s: %v", what, name, err)
				}
				if isMissing(refReply) {
					continue
				}
				refReply = onlySubcommands(t, refReply, what, known)
				subReply, err := sub.Do("COMMAND", what, name)
				if err != nil {
					t.Fatalf("eddy COMMAND %s %s: %v", what, name, err)
				}
				subReply = onlySubcommands(t, subReply, what, known)
				// Redis lists a container's subcommands in hash-table order,
				// which changes with each start: compare them sorted.
				refReply, subReply = sortSubcommands(t, refReply, what), sortSubcommands(t, subReply, what)
				if !bytes.Equal(refReply, subReply) {
					t.Errorf("RESP%s COMMAND %s %s differs (first difference at byte %d)\nredis:\n%s\neddy:\n%s",
						proto, what, name, firstDiff(refReply, subReply),
						indent(formatReply(refReply)), indent(formatReply(subReply)))
				}
			}
		}
	}
}

// commandNames is COMMAND LIST plus every "container|sub" name.
func commandNames(t *testing.T, c *rawConn) []string {
	t.Helper()
	b, err := c.Do("COMMAND", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	v, err := parseReply(b)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range v.elems {
		names = append(names, e.str)
	}
	return names
}

// isMissing reports COMMAND INFO's nil entry and COMMAND DOCS's empty map:
// the reference server does not know the command.
func isMissing(reply []byte) bool {
	s := string(reply)
	return strings.HasPrefix(s, "*1\r\n$-1\r\n") || strings.HasPrefix(s, "*1\r\n_\r\n") ||
		s == "*0\r\n" || s == "%0\r\n"
}

// subcommandList finds the list of subcommands in a COMMAND INFO or
// COMMAND DOCS reply about one command, and how many elements one
// subcommand takes in it (a name/docs pair in DOCS); nil if there is none.
func subcommandList(v *respValue, what string) (*respValue, int) {
	if what == "INFO" {
		if entry := &v.elems[0]; len(entry.elems) == 10 {
			return &entry.elems[9], 1
		}
		return nil, 0
	}
	docs := &v.elems[1]
	for i := 0; i+1 < len(docs.elems); i += 2 {
		if docs.elems[i].str == "subcommands" {
			return &docs.elems[i+1], 2
		}
	}
	return nil, 0
}

// subName is the name of the subcommand starting at elems[i].
func subName(elems []respValue, i int, what string) string {
	if what == "INFO" {
		return elems[i].elems[0].str
	}
	return elems[i].str
}

// sortSubcommands orders a container's subcommands by name.
func sortSubcommands(t *testing.T, reply []byte, what string) []byte {
	t.Helper()
	v, err := parseReply(reply)
	if err != nil {
		t.Fatal(err)
	}
	subs, stride := subcommandList(&v, what)
	if subs == nil {
		return reply
	}
	var groups [][]respValue
	for i := 0; i < len(subs.elems); i += stride {
		groups = append(groups, subs.elems[i:i+stride])
	}
	slices.SortFunc(groups, func(a, b []respValue) int {
		return strings.Compare(subName(a, 0, what), subName(b, 0, what))
	})
	subs.elems = slices.Concat(groups...)
	return appendValue(nil, v)
}

// onlySubcommands drops, from a reply about a container, the subcommands
// that are not known to both servers (Redis's CLIENT PAUSE, Eddy's CLIENT
// SETINFO).
func onlySubcommands(t *testing.T, reply []byte, what string, known map[string]bool) []byte {
	t.Helper()
	v, err := parseReply(reply)
	if err != nil {
		t.Fatal(err)
	}
	subs, stride := subcommandList(&v, what)
	if subs == nil {
		return reply
	}
	var kept []respValue
	for i := 0; i < len(subs.elems); i += stride {
		if known[subName(subs.elems, i, what)] {
			kept = append(kept, subs.elems[i:i+stride]...)
		}
	}
	subs.elems = kept
	return appendValue(nil, v)
}
