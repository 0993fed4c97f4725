package main

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

func TestCompactUsage(t *testing.T) {
	tests := []struct {
		args       []string
		wantCode   int
		wantStderr string // regexp
	}{
		{[]string{"compact", "--dir"}, exitUsage, `flag needs an argument: -dir`},
		{[]string{"compact", "--dir", ""}, exitUsage, `(?m)^eddy compact: --dir must not be empty$`},
		{[]string{"compact", "--dir", "d", "extra"}, exitUsage, `(?m)^eddy compact: unexpected argument "extra"$`},
		{[]string{"compact", "--frob"}, exitUsage, `flag provided but not defined: -frob`},
		{[]string{"compact", "--help"}, exitOK, `(?s)^Usage: eddy compact \[--dir DIR\]`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runForTest(t, tt.args...)
		if code != tt.wantCode || stdout != "" || !regexp.MustCompile(tt.wantStderr).MatchString(stderr) {
			t.Errorf("eddy %q: code %d, stdout %q, stderr %q; want code %d, empty stdout, stderr matching %q",
				tt.args, code, stdout, stderr, tt.wantCode, tt.wantStderr)
		}
	}
}

// eddy compact keeps the data, reports sizes, and refuses a store that
// is open elsewhere instead of compacting under it.
func TestCompactStore(t *testing.T) {
	dir := t.TempDir()
	db, err := storage.Open(storage.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) []byte { return storage.AppendEntryKey(nil, 0, []byte("s"), 1, uint64(i), 0) }
	const n = 5000
	for i := 0; i < n; i += 500 {
		b := db.NewBatch()
		for j := i; j < i+500; j++ {
			if err := b.Set(key(j), fmt.Appendf(nil, "value %d", j)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	code, _, stderr := runForTest(t, "compact", "--dir", dir)
	if code != exitError || !regexp.MustCompile(`(?m)^eddy compact: .*lock`).MatchString(stderr) {
		t.Errorf("compact of an open store: code %d, stderr %q; want %d and a lock error", code, stderr, exitError)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runForTest(t, "compact", "--dir", dir)
	if code != exitOK || !regexp.MustCompile(`^compacted .* in [0-9.]+s: [1-9][0-9]* bytes before, [1-9][0-9]* after\n$`).MatchString(stdout) {
		t.Fatalf("compact: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	db, err = storage.Open(storage.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, i := range []int{0, n / 2, n - 1} {
		v, ok, err := db.Get(key(i))
		if want := fmt.Sprintf("value %d", i); err != nil || !ok || string(v) != want {
			t.Errorf("entry %d after compact: %q %v %v, want %q", i, v, ok, err, want)
		}
	}
}
