package bridge

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// natsServerPath is the import path of nats-server's API types.
const natsServerPath = "github.com/nats-io/nats-server/v2/server"

// TestStatusLinesInOneFile: every NATS status line and every JetStream
// API error text the bridge words itself lives in status.go (doc.go). It
// parses the package's non-test files, whatever their build constraints,
// and fails outside status.go on
//   - a string literal holding a status line: "NATS/1.0 " and a code
//     (a header block's plain "NATS/1.0\r\n" is not one);
//   - a server.ApiError built as a composite literal;
//   - a string literal inside the arguments of a server.NewJS…Error
//     constructor (a description worded inline).
func TestStatusLinesInOneFile(t *testing.T) {
	statusLine := regexp.MustCompile(`NATS/1\.0 [0-9]`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	parsed := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "status.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed++
		nats := importName(f, natsServerPath)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if text := stringLit(t, fset, n); statusLine.MatchString(text) {
					t.Errorf("%s: status line %q outside status.go", fset.Position(n.Pos()), text)
				}
			case *ast.CompositeLit:
				if isSelector(n.Type, nats, "ApiError") {
					t.Errorf("%s: server.ApiError built outside status.go", fset.Position(n.Pos()))
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && isSelector(sel, nats, sel.Sel.Name) &&
					strings.HasPrefix(sel.Sel.Name, "NewJS") && strings.HasSuffix(sel.Sel.Name, "Error") {
					for _, arg := range n.Args {
						ast.Inspect(arg, func(m ast.Node) bool {
							if bl, ok := m.(*ast.BasicLit); ok && bl.Kind == token.STRING {
								t.Errorf("%s: API error text %s worded outside status.go", fset.Position(bl.Pos()), bl.Value)
							}
							return true
						})
					}
				}
			}
			return true
		})
	}
	if parsed == 0 {
		t.Fatal("no files parsed: is the test running in the package's directory?")
	}
}

// importName is the name file f gives the package at path ("" when f
// does not import it).
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == path {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return path[strings.LastIndex(path, "/")+1:]
		}
	}
	return ""
}

// isSelector reports whether e is pkg.name, with pkg a package name.
func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || pkg == "" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && sel.Sel.Name == name
}

// stringLit is the text of a string literal; "" for other literals.
func stringLit(t *testing.T, fset *token.FileSet, bl *ast.BasicLit) string {
	if bl.Kind != token.STRING {
		return ""
	}
	text, err := strconv.Unquote(bl.Value)
	if err != nil {
		t.Fatalf("%s: %v", fset.Position(bl.Pos()), err)
	}
	return text
}

// The texts status.go words, byte for byte as they were written inline
// (the status lines as nats-server v2.15 sends them; the descriptions as
// its checkConsumerCfg words them, or the bridge's own).
func TestStatusTexts(t *testing.T) {
	failed := errors.New("disk\r\non fire")
	for _, c := range []struct {
		got  any
		want string
	}{
		{statusReadFailed(failed), "NATS/1.0 500 disk  on fire\r\n\r\n"},
		{statusEOB(3, 7), "NATS/1.0 204 EOB\r\nNats-Num-Pending: 3\r\nNats-Last-Sequence: 7\r\n\r\n"},
		{statusEOBUpTo(0, 7, 9), "NATS/1.0 204 EOB\r\nNats-Num-Pending: 0\r\nNats-Last-Sequence: 7\r\nNats-UpTo-Sequence: 9\r\n\r\n"},
		{apiReadFailed(failed), `{"type":"io.nats.jetstream.api.v1.error","error":{"code":500,"description":"disk\r\non fire"}}`},
		{errConsumerNameInvalid().Description, `consumer name can not contain '.', '*', '>', '\', '/'`},
		{errDeliverStartSet("all", "sequence").Description, "consumer delivery policy is deliver all, but optional start sequence is also set"},
		{errDeliverNotSet("by start time", "start time").Description, "consumer delivery policy is deliver by start time, but optional start time is not set"},
		{errPushUnavailable("no leafnode connection").Description, "push consumers are not available on this Eddy bridge: no leafnode connection"},
		{errBridgeClosing().Description, "the bridge is closing"},
		{errUnsupportedConsumer("pull consumers").Description, "pull consumers are not supported by the Eddy bridge"},
	} {
		got := fmt.Sprint(c.got)
		if b, ok := c.got.([]byte); ok {
			got = string(b)
		}
		if got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
