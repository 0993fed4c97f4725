package server

import (
	"fmt"
	"strings"
)

// ConfigMarkdown renders the directive table (configTable) as the Markdown
// table of docs/configuration.md, one row per directive in table order:
// name, default, whether CONFIG SET may change it, and what it means (the
// row's doc, else its usage). The page's table is this text, checked by
// TestConfigDoc, so the documentation cannot drift from the code; `make
// docs` rewrites it.
func ConfigMarkdown() string {
	var b strings.Builder
	b.WriteString("| Directive | Default | CONFIG SET | Meaning |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, d := range configTable {
		def := "(empty)"
		if d.def != "" {
			def = "`" + d.def + "`"
		}
		set := "yes"
		switch {
		case d.value.fixed:
			set = "only " + def
			if d.def == "" {
				set = "only `\"\"`"
			}
		case d.immutable:
			set = "no"
		}
		meaning := d.doc
		if meaning == "" {
			meaning = d.usage
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", d.name, def, set, strings.ReplaceAll(meaning, "|", `\|`))
	}
	return b.String()
}
