package server

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/eddy-streams/eddy/replication"
	"github.com/eddy-streams/eddy/storage"
)

// TestErrorsNameProtoVersion: the error texts are constants, so the one
// that tells a client which replication protocol to ask for spells the
// version out; it must be the version the replication package speaks.
func TestErrorsNameProtoVersion(t *testing.T) {
	want := "REPLCONF eddy-proto " + strconv.Itoa(replication.ProtoVersion) + " first"
	if !strings.Contains(errPSyncNeedsEddy, want) {
		t.Errorf("errPSyncNeedsEddy = %q, want it to say %q", errPSyncNeedsEddy, want)
	}
}

// A failed journal is refused as Redis refuses writes after a failed AOF
// write: its system error as strerror spells it, else the error's text.
func TestErrorTextJournalFailed(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: sync: %w", storage.ErrJournalFailed, syscall.EIO), "MISCONF Errors writing to the AOF file: Input/output error"},
		{fmt.Errorf("%w: write: %w", storage.ErrJournalFailed, syscall.ENOSPC), "MISCONF Errors writing to the AOF file: No space left on device"},
		{fmt.Errorf("%w: sync: injected", storage.ErrJournalFailed), "MISCONF Errors writing to the AOF file: storage: journal failed: sync: injected"},
	} {
		if got := errorText(c.err); got != c.want {
			t.Errorf("errorText(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// A read that met damaged data says so on one line, naming the table and
// the block.
func TestErrorTextStoreDamaged(t *testing.T) {
	err := fmt.Errorf("%w: %s", storage.ErrDamaged, "pebble: file 000010: block 368103/420: crc32c checksum mismatch 7d388434 != 6b2079dd")
	want := "ERR store damaged: file 000010: block 368103/420: crc32c checksum mismatch 7d388434 != 6b2079dd"
	if got := errorText(err); got != want {
		t.Errorf("errorText = %q, want %q", got, want)
	}
}

// The replication commands' texts with an argument, byte for byte.
func TestErrorsReplication(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{errPromoteFailed(errors.New("storage: closed")), "ERR storage: closed"},
		{errEddyProtoVersion([]byte("2"), replication.ProtoVersion), fmt.Sprintf("ERR unsupported eddy replication protocol 2 (this server speaks %d)", replication.ProtoVersion)},
		{errReplConfOption([]byte("rdb-only")), "ERR Unrecognized REPLCONF option: rdb-only"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// redisErrorCodes are the codes Redis 7.0 starts its error replies with;
// TestErrorTextsInOneFile adds every code errors.go uses.
var redisErrorCodes = []string{
	"ERR", "WRONGTYPE", "NOGROUP", "BUSYGROUP", "NOAUTH", "WRONGPASS", "NOPERM",
	"MISCONF", "LOADING", "READONLY", "EXECABORT", "NOREPLICAS", "UNBLOCKED",
	"NOPROTO", "BUSYKEY", "MASTERDOWN", "NOMASTERLINK", "OOM", "BUSY", "NOTBUSY",
	"UNKILLABLE", "NOSCRIPT", "DENIED", "CROSSSLOT", "MOVED", "ASK", "TRYAGAIN",
	"CLUSTERDOWN",
}

// TestErrorTextsInOneFile: every Redis error text the server sends lives
// in errors.go. A string literal of another non-test file that is an
// error reply — an error code, alone or followed by a space, with or
// without RESP's leading "-" ("ERR ", "-NOGROUP No such …") — fails.
// The codes are Redis's and those errors.go itself uses, so a new code
// added there is held too. A lone "-" (RESP's error marker in front of a
// constant from errors.go, or a stream ID) is not a text.
func TestErrorTextsInOneFile(t *testing.T) {
	literals := packageLiterals(t)
	codes := slices.Clone(redisErrorCodes)
	leading := regexp.MustCompile(`^-?([A-Z]{2,}) `)
	for _, l := range literals {
		if l.file == "errors.go" {
			if m := leading.FindStringSubmatch(l.text); m != nil {
				codes = append(codes, m[1])
			}
		}
	}
	slices.Sort(codes)
	isError := regexp.MustCompile(`^-?(` + strings.Join(slices.Compact(codes), "|") + `)( |$)`)
	for _, l := range literals {
		if l.file != "errors.go" && isError.MatchString(l.text) {
			t.Errorf("%s: error text %q outside errors.go: make it a constant or function there", l.pos, l.text)
		}
	}
}

// literal is a string literal of the package's code.
type literal struct {
	file, text string
	pos        token.Position
}

// packageLiterals parses the package's non-test files, whatever their
// build constraints, and returns their string literals, unquoted.
func packageLiterals(t *testing.T) []literal {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []literal
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == token.STRING {
				text, err := strconv.Unquote(bl.Value)
				if err != nil {
					t.Fatalf("%s: %v", fset.Position(bl.Pos()), err)
				}
				out = append(out, literal{name, text, fset.Position(bl.Pos())})
			}
			return true
		})
	}
	if len(out) == 0 {
		t.Fatal("no string literals found: is the test running in the package's directory?")
	}
	return out
}
