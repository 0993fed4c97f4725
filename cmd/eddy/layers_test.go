package main

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The module's layers (STYLE.md, "Layering"), held here where the parts
// meet. layers lists, for each package of the module (its path inside
// the module), the packages of the module its code may import directly.
// A package the table does not name fails the test, so a new package is
// placed deliberately. A path ending in "/..." stands for a folder and
// everything below it, as in go's patterns.
//
// The table holds the code a package ships, not its tests: unit tests may
// reach below their layer for fixtures (an engine on an in-memory Pebble,
// a bridge test's engine on storage). tests/ is all test code, so there
// its test files are held.
var layers = map[string][]string{
	"cmd/eddy":    {"bridge", "replication", "server", "storage", "stream"},
	"server":      {"replication", "server/poll", "stream"},
	"server/poll": {}, // the event loop's view of the operating system
	"bridge":      {"stream"},
	"replication": {"storage", "stream"},
	"stream":      {"storage"},
	"storage":     {},
	"tests":       {}, // black box: builds cmd/eddy and talks TCP
	// The load generators are black boxes too, sharing only their own
	// helpers.
	"bench/...": {"bench/internal/..."},
}

// blackBox names the packages whose test files are held by the table.
var blackBox = map[string]bool{"tests": true}

// owners lists, for an outside module (a path prefix), the packages that
// alone may import it directly.
var owners = []struct {
	prefix string
	owners []string
	why    string
}{
	{"github.com/cockroachdb/pebble", []string{"storage"}, "storage is the only importer of Pebble"},
	{"github.com/tidwall/redcon", []string{"server/..."}, "the RESP network library is server's alone"},
	{"github.com/panjf2000/gnet", []string{"server/..."}, "the RESP network library is server's alone"},
}

// systems are the GOOS values whose files are listed: Eddy is served on
// Linux and builds on macOS and Windows (Makefile, portable), and some
// files are for one system only.
var systems = []string{"linux", "darwin", "windows"}

// matchPath reports whether pkg is pattern, or below it when pattern
// ends in "/...".
func matchPath(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == dir || strings.HasPrefix(pkg, dir+"/")
	}
	return pkg == pattern
}

func matchAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matchPath(p, pkg) })
}

// moduleImports lists the module's packages with the imports of their
// code (see layers), keyed by path inside the module, over systems.
func moduleImports(t *testing.T) (module string, imports map[string][]string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Path}}\t{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	module, root, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	imports = map[string][]string{}
	for _, goos := range systems {
		cmd := exec.Command("go", "list", "-f",
			"{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list ./...: %v\n%s", goos, err, stderr.Bytes())
		}
		for line := range strings.Lines(string(out)) {
			f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
			pkg, ok := inModule(module, f[0])
			if !ok || len(f) != 3 {
				t.Fatalf("GOOS=%s go list: unexpected line %q", goos, line)
			}
			imps := strings.Fields(f[1])
			if blackBox[pkg] {
				imps = append(imps, strings.Fields(f[2])...)
			}
			imports[pkg] = append(imports[pkg], imps...)
		}
	}
	for pkg, imps := range imports {
		slices.Sort(imps)
		imports[pkg] = slices.Compact(imps)
	}
	return module, imports
}

// inModule returns path inside module, ok false when path is not the
// module's.
func inModule(module, path string) (string, bool) {
	if path == module {
		return ".", true
	}
	return strings.CutPrefix(path, module+"/")
}

func TestLayers(t *testing.T) {
	module, imports := moduleImports(t)
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		allowed, placed := rowFor(pkg)
		if !placed {
			t.Errorf("%s is not in the layers table: place it (cmd/eddy/layers_test.go)", pkg)
			continue
		}
		for _, imp := range imports[pkg] {
			if dep, ok := inModule(module, imp); ok {
				if !matchAny(allowed, dep) {
					t.Errorf("%s imports %s; it may import only %v", pkg, dep, allowed)
				}
				continue
			}
			for _, o := range owners {
				if matchPath(o.prefix+"/...", imp) && !matchAny(o.owners, pkg) {
					t.Errorf("%s imports %s: %s", pkg, imp, o.why)
				}
			}
		}
	}
	// A row for a package that is gone is a stale promise.
	for key := range layers {
		if _, ok := imports[key]; !ok && !strings.HasSuffix(key, "/...") {
			t.Errorf("the layers table names %s, which is not a package of %s", key, module)
		}
	}
}

// rowFor returns the layers row of pkg: its own, else the longest
// folder row above it.
func rowFor(pkg string) (allowed []string, ok bool) {
	if allowed, ok = layers[pkg]; ok {
		return allowed, true
	}
	best := ""
	for key, a := range layers {
		if matchPath(key, pkg) && len(key) > len(best) {
			best, allowed, ok = key, a, true
		}
	}
	return allowed, ok
}
