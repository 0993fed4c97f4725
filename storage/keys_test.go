package storage

import (
	"bytes"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestKeyLayoutGolden freezes the on-disk key and value layouts: a change
// here breaks every existing store and must come with a format version.
func TestKeyLayoutGolden(t *testing.T) {
	cases := []struct {
		name string
		got  []byte
	}{
		{"meta", AppendMetaKey(nil, 3, []byte("orders"))},
		{"entry", AppendEntryKey(nil, 3, []byte("orders"), 7, 1700000000000, 2)},
		{"node", AppendNodeKey(nil, 0, []byte("s"), 1, 5, 0)},
		{"garbage", AppendGarbageKey(nil, 9)},
		{"garbage-value", EncodeGarbageValue(2, []byte("k"))},
		{"expiry", AppendExpiryKey(nil, 1234, 1, []byte("k"))},
		{"store-format", storeKey(recordFormat)},
		{"meta-value", AppendMeta(nil, &Meta{Type: TypeStream, Version: 300, ExpireAt: 5, Body: []byte{1, 2}})},
		{"entry-value", AppendEntryValue(nil, [][]byte{[]byte("f"), []byte(""), []byte("\x00"), []byte("v")})},
	}
	var b strings.Builder
	for _, c := range cases {
		b.WriteString(c.name + " " + hex.EncodeToString(c.got) + "\n")
	}
	path := filepath.Join("testdata", "layout.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("layout changed:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestKeyRoundTrip(t *testing.T) {
	k := AppendMetaKey(nil, 15, []byte("a\x00b"))
	db, key, err := DecodeMetaKey(k)
	if err != nil || db != 15 || string(key) != "a\x00b" {
		t.Fatalf("meta: %d %q %v", db, key, err)
	}
	at, db, key, err := DecodeExpiryKey(AppendExpiryKey(nil, 99, 4, []byte("x")))
	if err != nil || at != 99 || db != 4 || string(key) != "x" {
		t.Fatalf("expiry: %d %d %q %v", at, db, key, err)
	}
	lo, hi, err := DecodeGarbage(AppendGarbageKey(nil, 8), EncodeGarbageValue(1, []byte("s")))
	if err != nil {
		t.Fatal(err)
	}
	e := AppendEntryKey(nil, 1, []byte("s"), 8, 1, 1)
	if bytes.Compare(lo, e) > 0 || bytes.Compare(e, hi) >= 0 {
		t.Fatalf("garbage range does not cover the entry")
	}
	other := AppendEntryKey(nil, 1, []byte("s"), 9, 0, 0)
	if bytes.Compare(other, hi) < 0 {
		t.Fatalf("garbage range covers the next version")
	}
}

// A name must never be a prefix of another's range: stream "a" and "ab".
func TestNamesArePrefixFree(t *testing.T) {
	lo, hi := VersionBounds(0, []byte("a"), 1)
	k := AppendEntryKey(nil, 0, []byte("ab"), 1, 0, 0)
	if bytes.Compare(lo, k) <= 0 && bytes.Compare(k, hi) < 0 {
		t.Fatal(`entries of "ab" fall in the range of "a"`)
	}
}

func FuzzEntryKeyOrder(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint64(1), uint64(3))
	f.Add(uint64(0), uint64(1<<63), uint64(1), uint64(0))
	f.Fuzz(func(t *testing.T, ms1, seq1, ms2, seq2 uint64) {
		a := AppendEntryKey(nil, 0, []byte("s"), 1, ms1, seq1)
		b := AppendEntryKey(nil, 0, []byte("s"), 1, ms2, seq2)
		want := 0
		switch {
		case ms1 < ms2 || (ms1 == ms2 && seq1 < seq2):
			want = -1
		case ms1 > ms2 || (ms1 == ms2 && seq1 > seq2):
			want = 1
		}
		if got := bytes.Compare(a, b); got != want {
			t.Fatalf("order of (%d,%d) vs (%d,%d): %d want %d", ms1, seq1, ms2, seq2, got, want)
		}
		m, s, err := DecodeIDSuffix(a)
		if err != nil || m != ms1 || s != seq1 {
			t.Fatalf("round trip: %d %d %v", m, s, err)
		}
	})
}

func FuzzEntryValue(f *testing.F) {
	f.Add([]byte("field"), []byte("value"), []byte(""))
	f.Add([]byte("\x00"), []byte{}, []byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		in := [][]byte{a, b, c, a}
		enc := AppendEntryValue(nil, in)
		out, err := DecodeEntryValue(enc, nil)
		if err != nil || len(out) != len(in) {
			t.Fatalf("decode: %v %d", err, len(out))
		}
		for i := range in {
			if !bytes.Equal(in[i], out[i]) {
				t.Fatalf("field %d: %q != %q", i, out[i], in[i])
			}
		}
		// Any truncation is an error, never a panic or a wrong value.
		for cut := 0; cut < len(enc); cut++ {
			if _, err := DecodeEntryValue(enc[:cut], nil); err == nil {
				t.Fatalf("truncated at %d decoded", cut)
			}
		}
	})
}
