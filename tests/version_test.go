package tests

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The binary reports one version: what `eddy --version` (and -v, and
// `eddy version`) prints is what INFO's eddy_version says.
func TestVersionFlagMatchesInfo(t *testing.T) {
	eddyOnly(t, "eddy --version and eddy_version are Eddy's")
	var printed string
	for _, arg := range []string{"--version", "-v", "version"} {
		out, err := exec.Command(eddyBin, arg).CombinedOutput()
		if err != nil {
			t.Fatalf("eddy %s: %v\n%s", arg, err, out)
		}
		m := regexp.MustCompile(`^eddy (\S+) \(go[^)]+\)\n$`).FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("eddy %s printed %q, want \"eddy <version> (<go version>)\"", arg, out)
		}
		if printed != "" && m[1] != printed {
			t.Fatalf("eddy %s printed version %q, eddy --version %q", arg, m[1], printed)
		}
		printed = m[1]
	}
	info, err := startEddy(t).Client().Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "eddy_version:"); ok {
			if v != printed {
				t.Fatalf("INFO eddy_version = %q, eddy --version printed %q", v, printed)
			}
			return
		}
	}
	t.Fatalf("INFO server has no eddy_version line:\n%s", info)
}
