package server

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateConfigDoc = flag.Bool("update-config-doc", false,
	"rewrite the directive table in docs/configuration.md from config.go's table")

// The generated part of docs/configuration.md lies between these lines.
const (
	configDocBegin = "<!-- BEGIN directives: generated from server/config.go by `make docs`; do not edit -->\n"
	configDocEnd   = "<!-- END directives -->\n"
)

// TestConfigDoc fails when docs/configuration.md's directive table is not
// what ConfigMarkdown renders from the table in config.go. To regenerate:
//
//	make docs   (go test ./server -run '^TestConfigDoc$' -update-config-doc)
func TestConfigDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "configuration.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	i := strings.Index(page, configDocBegin)
	j := strings.Index(page, configDocEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", path, configDocBegin, configDocEnd)
	}
	start := i + len(configDocBegin)
	want := ConfigMarkdown()
	if *updateConfigDoc {
		if err := os.WriteFile(path, []byte(page[:start]+want+page[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := page[start:j]; got != want {
		gotLines, wantLines := strings.Split(got, "\n"), strings.Split(want, "\n")
		for k := 0; k < len(gotLines) || k < len(wantLines); k++ {
			var g, w string
			if k < len(gotLines) {
				g = gotLines[k]
			}
			if k < len(wantLines) {
				w = wantLines[k]
			}
			if g != w {
				t.Errorf("%s: table line %d is\n\t%s\nwant\n\t%s", path, k+1, g, w)
				break
			}
		}
		t.Errorf("%s differs from config.go's directive table: run `make docs`", path)
	}
}

// Every directive is a row, with its own CONFIG SET answer.
func TestConfigMarkdownRows(t *testing.T) {
	md := ConfigMarkdown()
	for _, want := range []string{
		"| `port` | `6379` | no | ",
		"| `appendfsync` | `everysec` | yes | ",
		"| `requirepass` | (empty) | yes | ",
		"| `save` | (empty) | only `\"\"` | ",
		"| `appendonly` | `yes` | only `yes` | ",
	} {
		if !strings.Contains(md, "\n"+want) {
			t.Errorf("ConfigMarkdown has no row starting %q", want)
		}
	}
	// Outside code spans, "<word>" would be taken for HTML and vanish.
	for i, span := range strings.Split(md, "`") {
		if i%2 == 0 && strings.Contains(span, "<") {
			t.Errorf("ConfigMarkdown has a '<' outside backquotes: %q (give the row a doc with `...`)", span)
		}
	}
	if rows := strings.Count(md, "\n| `"); rows != len(configTable) {
		t.Errorf("ConfigMarkdown has %d directive rows, want %d", rows, len(configTable))
	}
}
