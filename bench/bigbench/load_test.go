//go:build linux

package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// parseCommand splits one RESP array of bulk strings.
func parseCommand(t *testing.T, b []byte) []string {
	t.Helper()
	r := bufio.NewReader(bytes.NewReader(b))
	line := func() string {
		l, err := r.ReadString('\n')
		if err != nil || len(l) < 3 || l[len(l)-2] != '\r' {
			t.Fatalf("bad line %q: %v", l, err)
		}
		return l[:len(l)-2]
	}
	h := line()
	n, err := strconv.Atoi(h[1:])
	if h[0] != '*' || err != nil {
		t.Fatalf("bad header %q", h)
	}
	var args []string
	for range n {
		h := line()
		m, err := strconv.Atoi(h[1:])
		if h[0] != '$' || err != nil {
			t.Fatalf("bad bulk header %q", h)
		}
		buf := make([]byte, m+2)
		if _, err := r.Read(buf); err != nil {
			t.Fatal(err)
		}
		args = append(args, string(buf[:m]))
	}
	if r.Buffered() != 0 {
		t.Fatalf("%d bytes after the command", r.Buffered())
	}
	return args
}

// Every entry has the documented shape and size, the same index gives
// the same bytes (both servers store the same data), and payloads differ.
func TestAppendXAdd(t *testing.T) {
	seen := map[string]bool{}
	for _, i := range []uint64{0, 1, 2, 99, 12_345_678, 1 << 40} {
		cmd := appendXAdd(nil, "k", i)
		if !bytes.Equal(cmd, appendXAdd(nil, "k", i)) {
			t.Fatalf("entry %d: not deterministic", i)
		}
		args := parseCommand(t, cmd)
		if len(args) != 9 || args[0] != "XADD" || args[1] != "k" || args[2] != "*" ||
			args[3] != "device" || args[5] != "temp" || args[7] != "payload" {
			t.Fatalf("entry %d: %q", i, args)
		}
		size := 0
		for _, a := range args[3:] {
			size += len(a)
		}
		if size != fieldBytes {
			t.Errorf("entry %d: %d bytes of fields and values, want %d: %q", i, size, fieldBytes, args[3:])
		}
		if v, err := strconv.ParseFloat(args[6], 64); err != nil || v < 10 || v >= 40 || len(args[6]) != 5 {
			t.Errorf("entry %d: temp %q", i, args[6])
		}
		if seen[args[8]] {
			t.Errorf("entry %d: payload %q repeats", i, args[8])
		}
		seen[args[8]] = true
	}
}

func TestMeasureDir(t *testing.T) {
	dir := t.TempDir()
	files := map[string]int{"000001.sst": 100, "000002.log": 30, "MANIFEST-000003": 7, "OPTIONS-000004": 5, "sub/dump.rdb": 11, "sub/appendonly.aof.1.base.rdb": 3}
	for name, n := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := measureDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"sst": 100, "wal": 30, "manifest": 7, "other": 5, "rdb": 11, "aof": 3}
	if d.Bytes != 156 || d.Allocated < d.Bytes || len(d.ByKind) != len(want) {
		t.Fatalf("measureDir = %+v", d)
	}
	for k, v := range want {
		if d.ByKind[k] != v {
			t.Errorf("%s: %d bytes, want %d", k, d.ByKind[k], v)
		}
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr bool
	}{
		{nil, false},
		{[]string{"-entries", "99"}, true},
		{[]string{"-rounds", "0"}, true},
		{[]string{"-write-mb", "0"}, true},
		{[]string{"extra"}, true},
		{[]string{"-entries", "200000", "-eddy-args", "--cache-size 8mb"}, false},
	}
	for _, tt := range tests {
		o, err := parseFlags(tt.args)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseFlags(%q): %v, want error %v", tt.args, err, tt.wantErr)
		}
		if err == nil && len(tt.args) == 4 && (o.entries != 200000 || len(o.eddyArgs) != 2) {
			t.Errorf("parseFlags(%q) = %+v", tt.args, o)
		}
	}
}
