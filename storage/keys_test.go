package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"slices"
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
		{"entry-value", AppendEntryValue(nil, 300, [][]byte{[]byte("f"), []byte(""), []byte("\x00"), []byte("v")})},
		{"entry-value-set", AppendEntryValueSet(nil, 300, 2, [][]byte{[]byte("f"), []byte(""), []byte("\x00"), []byte("v")})},
		{"field-set", AppendFieldSet(nil, [][]byte{[]byte("f"), []byte("\x00")})},
		{"seq-index", AppendSeqIndexKey(nil, 3, []byte("orders"), 7, 1000)},
		{"subject-index", AppendSubjectKey(nil, 3, []byte("orders"), 7, []byte("orders.eu"), 1000)},
		{"field-set-key", AppendFieldSetKey(nil, 3, []byte("orders"), 7, 2)},
		{"id-value", AppendIDValue(nil, 1700000000000, 2)},
		{"scan", AppendScanKey(nil, 3, ScanHash([]byte("orders")), []byte("orders"))},
		{"scan-hash-empty", binary.BigEndian.AppendUint64(nil, ScanHash(nil))},
		{"store-key-counts", KeyCountsKey(3)},
		{"key-counts-value", AppendKeyCounts(nil, 1000, 7)},
		{"store-key-index", KeyIndexKey()},
		{"group", AppendGroupKey(nil, 3, []byte("orders"), 7, []byte("billing"))},
		{"consumer", AppendConsumerKey(nil, 3, []byte("orders"), 7, []byte("billing"), []byte("w1"))},
		{"pel-by-id", AppendPELKey(nil, 3, []byte("orders"), 7, []byte("billing"), 1700000000000, 2)},
		{"pel-by-owner", AppendPELConsumerKey(nil, 3, []byte("orders"), 7, []byte("billing"), []byte("w1"), 1700000000000, 2)},
		{"store-journal", storeKey(recordJournal)},
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

// TestDecodeNodeKey: a node key decodes to what built it; other keys of
// the same stream, and a truncated node key, do not decode.
func TestDecodeNodeKey(t *testing.T) {
	k := AppendNodeKey(nil, 3, []byte("s\x02t"), 7, 1700000000000, 5)
	db, key, version, ms, seq, err := DecodeNodeKey(k)
	if err != nil || db != 3 || string(key) != "s\x02t" || version != 7 || ms != 1700000000000 || seq != 5 {
		t.Fatalf("node: %d %q %d %d-%d %v", db, key, version, ms, seq, err)
	}
	for name, bad := range map[string][]byte{
		"entry":     AppendEntryKey(nil, 3, []byte("s"), 7, 1, 5),
		"meta":      AppendMetaKey(nil, 3, []byte("s")),
		"seq index": AppendSeqIndexKey(nil, 3, []byte("s"), 7, 5),
		"truncated": k[:len(k)-1],
		"store":     storeKey([]byte("keys")),
	} {
		if _, _, _, _, _, err := DecodeNodeKey(bad); err == nil {
			t.Errorf("%s key decoded as a node key", name)
		}
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
	f.Add([]byte("field"), []byte("value"), []byte(""), uint64(1))
	f.Add([]byte("\x00"), []byte{}, []byte("\xff\xfe"), uint64(1<<40))
	f.Fuzz(func(t *testing.T, a, b, c []byte, seq uint64) {
		in := [][]byte{a, b, c, a}
		names := [][]byte{a, c}
		set := testFieldSets{7: names}
		for _, enc := range [][]byte{AppendEntryValue(nil, seq, in), AppendEntryValueSet(nil, seq, 7, in)} {
			h, out, err := DecodeEntryValue(enc, set, nil)
			if err != nil || len(out) != len(in) || h.Seq != seq {
				t.Fatalf("decode: %v %d %+v", err, len(out), h)
			}
			for i := range in {
				if !bytes.Equal(in[i], out[i]) {
					t.Fatalf("field %d: %q != %q", i, out[i], in[i])
				}
			}
			// Any truncation is an error, never a panic or a wrong value.
			for cut := 0; cut < len(enc); cut++ {
				if _, _, err := DecodeEntryValue(enc[:cut], set, nil); err == nil {
					t.Fatalf("truncated at %d decoded", cut)
				}
			}
		}
	})
}

type testFieldSets map[uint64][][]byte

func (s testFieldSets) FieldSet(id uint64) ([][]byte, error) {
	if names, ok := s[id]; ok {
		return names, nil
	}
	return nil, ErrCorrupt
}

func TestFieldSetRoundTrip(t *testing.T) {
	for _, names := range [][][]byte{nil, {[]byte("")}, {[]byte("a"), []byte("bb"), []byte("\x00")}} {
		enc := AppendFieldSet(nil, names)
		got, err := DecodeFieldSet(enc)
		if err != nil || len(got) != len(names) {
			t.Fatalf("%q: %q %v", names, got, err)
		}
		for i := range names {
			if !bytes.Equal(got[i], names[i]) {
				t.Fatalf("%q: %q", names, got)
			}
		}
		for cut := 0; cut < len(enc); cut++ {
			if _, err := DecodeFieldSet(enc[:cut]); err == nil {
				t.Fatalf("%q truncated at %d decoded", names, cut)
			}
		}
	}
}

func TestIndexKeysRoundTrip(t *testing.T) {
	k := AppendSeqIndexKey(nil, 2, []byte("s"), 9, 12345)
	if n, err := DecodeSeqIndexKey(k); err != nil || n != 12345 {
		t.Fatalf("seq index: %d %v", n, err)
	}
	k = AppendSubjectKey(nil, 2, []byte("s"), 9, []byte("a.b"), 77)
	if subj, n, err := DecodeSubjectKey(k); err != nil || n != 77 || string(subj) != "a.b" {
		t.Fatalf("subject: %q %d %v", subj, n, err)
	}
	lo, hi := SubjectBounds(2, []byte("s"), 9, []byte("a.b"))
	if bytes.Compare(lo, k) > 0 || bytes.Compare(k, hi) >= 0 {
		t.Fatal("subject key outside its bounds")
	}
	other := AppendSubjectKey(nil, 2, []byte("s"), 9, []byte("a.bc"), 1)
	if bytes.Compare(lo, other) <= 0 && bytes.Compare(other, hi) < 0 {
		t.Fatal("subject a.bc inside the bounds of a.b")
	}
	k = AppendFieldSetKey(nil, 2, []byte("s"), 9, 3)
	if id, err := DecodeFieldSetKey(k); err != nil || id != 3 {
		t.Fatalf("field set: %d %v", id, err)
	}
}

func TestScanAndCountKeys(t *testing.T) {
	for _, key := range [][]byte{nil, []byte("a"), []byte("session:1"), bytes.Repeat([]byte{0xff}, 300)} {
		h := ScanHash(key)
		if h == 0 || h>>63 != 0 {
			t.Fatalf("ScanHash(%q) = %#x: must be in [1, 2^63)", key, h)
		}
		k := AppendScanKey(nil, 7, h, key)
		db, gh, gk, err := DecodeScanKey(k)
		if err != nil || db != 7 || gh != h || !bytes.Equal(gk, key) {
			t.Fatalf("scan key of %q: %d %#x %q %v", key, db, gh, gk, err)
		}
		// Bounds from h cover the key; bounds from h+1 do not, and
		// neither do another database's.
		if lo, hi := ScanBounds(7, h); bytes.Compare(lo, k) > 0 || bytes.Compare(k, hi) >= 0 {
			t.Fatalf("ScanBounds(7, h) misses %q", key)
		}
		if lo, _ := ScanBounds(7, h+1); bytes.Compare(lo, k) <= 0 {
			t.Fatalf("ScanBounds(7, h+1) covers %q", key)
		}
		if lo, hi := ScanBounds(6, 0); bytes.Compare(k, hi) < 0 && bytes.Compare(lo, k) <= 0 {
			t.Fatalf("database 6 covers a key of 7")
		}
		if lo, hi := AllKeyspace(); bytes.Compare(lo, k) > 0 || bytes.Compare(k, hi) >= 0 {
			t.Fatalf("AllKeyspace misses the scan index")
		}
	}
	if _, _, _, err := DecodeScanKey(AppendMetaKey(nil, 0, []byte("x"))); err == nil {
		t.Fatal("decoded a metadata key as a scan key")
	}

	lo, hi := KeyCountsBounds()
	for _, db := range []int{0, 1, 15, 65535} {
		k := KeyCountsKey(db)
		if got, err := DecodeKeyCountsKey(k); err != nil || got != db {
			t.Fatalf("counts key of db %d: %d %v", db, got, err)
		}
		if bytes.Compare(lo, k) > 0 || bytes.Compare(k, hi) >= 0 {
			t.Fatalf("KeyCountsBounds misses db %d", db)
		}
	}
	for _, other := range [][]byte{storeKey(recordFormat), storeKey(recordVersionHigh), KeyIndexKey()} {
		if bytes.Compare(lo, other) <= 0 && bytes.Compare(other, hi) < 0 {
			t.Fatalf("KeyCountsBounds covers store record %q", other)
		}
	}
	if keys, exp, err := DecodeKeyCounts(AppendKeyCounts(nil, 1<<40, 3)); err != nil || keys != 1<<40 || exp != 3 {
		t.Fatalf("counts value: %d %d %v", keys, exp, err)
	}
	if _, _, err := DecodeKeyCounts([]byte{1}); err == nil {
		t.Fatal("decoded a short counts value")
	}
}

// Group records: names round-trip, and one group's (or consumer's) range
// holds its records and none of a group whose name extends it.
func TestGroupKeys(t *testing.T) {
	for _, names := range [][2]string{{"g", "c"}, {"", ""}, {"a\x00b", "\xff\xff"}} {
		grp, con := []byte(names[0]), []byte(names[1])
		gn, err := DecodeGroupKey(AppendGroupKey(nil, 1, []byte("s"), 9, grp))
		if err != nil || !bytes.Equal(gn, grp) {
			t.Fatalf("group %q: %q %v", grp, gn, err)
		}
		g2, cn, err := DecodeConsumerKey(AppendConsumerKey(nil, 1, []byte("s"), 9, grp, con))
		if err != nil || !bytes.Equal(g2, grp) || !bytes.Equal(cn, con) {
			t.Fatalf("consumer %q/%q: %q/%q %v", grp, con, g2, cn, err)
		}
		longer := append(append([]byte(nil), grp...), 'x')
		in := func(lo, hi, k []byte) bool { return bytes.Compare(lo, k) <= 0 && bytes.Compare(k, hi) < 0 }
		lo, hi := ConsumerBounds(1, []byte("s"), 9, grp)
		if !in(lo, hi, AppendConsumerKey(nil, 1, []byte("s"), 9, grp, con)) || in(lo, hi, AppendConsumerKey(nil, 1, []byte("s"), 9, longer, con)) {
			t.Fatalf("ConsumerBounds of %q", grp)
		}
		lo, hi = PELBounds(1, []byte("s"), 9, grp)
		if !in(lo, hi, AppendPELKey(nil, 1, []byte("s"), 9, grp, ^uint64(0), ^uint64(0))) || in(lo, hi, AppendPELKey(nil, 1, []byte("s"), 9, longer, 0, 0)) {
			t.Fatalf("PELBounds of %q", grp)
		}
		lo, hi = PELConsumerBounds(1, []byte("s"), 9, grp, con)
		k := AppendPELConsumerKey(nil, 1, []byte("s"), 9, grp, con, 5, 6)
		if !in(lo, hi, k) || in(lo, hi, AppendPELConsumerKey(nil, 1, []byte("s"), 9, grp, append(con, 0), 0, 0)) {
			t.Fatalf("PELConsumerBounds of %q/%q", grp, con)
		}
		if lo, hi := PELOwnersBounds(1, []byte("s"), 9, grp); !in(lo, hi, k) {
			t.Fatalf("PELOwnersBounds of %q", grp)
		}
		if ms, seq, err := DecodeIDSuffix(k); err != nil || ms != 5 || seq != 6 {
			t.Fatalf("pel id: %d %d %v", ms, seq, err)
		}
		if lo, hi := VersionBounds(1, []byte("s"), 9); !in(lo, hi, k) {
			t.Fatalf("version bounds miss the PEL")
		}
	}
	if _, err := DecodeGroupKey(AppendConsumerKey(nil, 0, []byte("s"), 1, []byte("g"), []byte("c"))); err == nil {
		t.Fatal("decoded a consumer key as a group key")
	}
}

// TestMetaKeyPlacement holds format 3's promise: a key's metadata record
// sorts after the data of every version of that key and before the next
// key's, outside any one version's range, and is told from data records.
func TestMetaKeyPlacement(t *testing.T) {
	tests := []struct {
		name string
		key  []byte
	}{
		{"plain", []byte("orders")},
		{"empty", []byte{}},
		{"0xff bytes", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := AppendMetaKey(nil, 3, tt.key)
			db, key, err := DecodeMetaKey(meta)
			if err != nil || db != 3 || !bytes.Equal(key, tt.key) {
				t.Fatalf("DecodeMetaKey = %d %q %v", db, key, err)
			}
			if c := ClassifyKey(meta); c != ClassMeta {
				t.Errorf("ClassifyKey(meta) = %d, want ClassMeta", c)
			}
			for _, v := range []uint64{1, 7, metaVersion - 1} {
				for _, k := range [][]byte{
					AppendEntryKey(nil, 3, tt.key, v, ^uint64(0), ^uint64(0)),
					AppendFieldSetKey(nil, 3, tt.key, v, ^uint64(0)),
					AppendPELKey(nil, 3, tt.key, v, []byte("g"), 1, 1),
				} {
					if bytes.Compare(k, meta) >= 0 {
						t.Errorf("version %d: data key %x sorts at or after the metadata key %x", v, k, meta)
					}
					if IsMetaKey(k) {
						t.Errorf("IsMetaKey(%x) for a data key", k)
					}
				}
				lo, hi := VersionBounds(3, tt.key, v)
				if bytes.Compare(meta, lo) >= 0 && bytes.Compare(meta, hi) < 0 {
					t.Errorf("version %d's range [%x, %x) holds the metadata key", v, lo, hi)
				}
			}
			next := AppendEntryKey(nil, 3, append(slices.Clone(tt.key), 0), 1, 0, 0)
			if bytes.Compare(meta, next) >= 0 {
				t.Errorf("metadata key %x sorts at or after the next key's data %x", meta, next)
			}
			if c := ClassifyKey(AppendEntryKey(nil, 3, tt.key, 1, 1, 1)); c != ClassOther {
				t.Errorf("ClassifyKey(entry) = %d, want ClassOther", c)
			}
			if c := ClassifyKey(AppendPELKey(nil, 3, tt.key, 1, []byte("g"), 1, 1)); c != ClassGroup {
				t.Errorf("ClassifyKey(PEL) = %d, want ClassGroup", c)
			}
		})
	}
}

func TestPointRecord(t *testing.T) {
	// A key name that looks like the metadata suffix must not fool the
	// parse: it is read from its length, not searched for.
	odd := []byte("\xff\xff\xff\xff\xff\xff\xff\xff")
	meta := AppendMetaKey(nil, 0, []byte("s"))
	cases := []struct {
		name string
		key  []byte
		want bool
	}{
		{"metadata", meta, true},
		{"metadata, db 7", AppendMetaKey(nil, 7, []byte("s")), true},
		{"metadata, odd name", AppendMetaKey(nil, 0, odd), true},
		{"metadata, empty name", AppendMetaKey(nil, 0, nil), true},
		{"metadata with a trailing byte", append(append([]byte(nil), meta...), 0), false},
		{"node", AppendNodeKey(nil, 0, []byte("s"), 1, 5, 0), true},
		{"group", AppendGroupKey(nil, 0, []byte("s"), 1, []byte("g")), true},
		{"consumer", AppendConsumerKey(nil, 0, []byte("s"), 1, []byte("g"), []byte("c")), true},
		{"field set", AppendFieldSetKey(nil, 0, []byte("s"), 1, 3), true},
		{"entry", AppendEntryKey(nil, 0, []byte("s"), 1, 5, 0), false},
		{"entry of an odd name", AppendEntryKey(nil, 0, odd, 1, 5, 0), false},
		{"pel by id", AppendPELKey(nil, 0, []byte("s"), 1, []byte("g"), 5, 0), false},
		{"pel by owner", AppendPELConsumerKey(nil, 0, []byte("s"), 1, []byte("g"), []byte("c"), 5, 0), false},
		{"seq index", AppendSeqIndexKey(nil, 0, []byte("s"), 1, 9), false},
		{"subject index", AppendSubjectKey(nil, 0, []byte("s"), 1, []byte("a.b"), 9), false},
		{"version prefix only", AppendVersionPrefix(nil, 0, []byte("s"), 1), false},
		{"store record", KeyIndexKey(), false},
		{"key counts", KeyCountsKey(0), false},
		{"garbage", AppendGarbageKey(nil, 1), false},
		{"expiry", AppendExpiryKey(nil, 1000, 0, []byte("s")), false},
		{"scan index", AppendScanKey(nil, 0, 42, []byte("s")), false},
		{"empty", nil, false},
		{"name longer than the key", []byte{tagData, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 2}, false},
	}
	for _, c := range cases {
		if got := pointRecord(c.key); got != c.want {
			t.Errorf("%s: pointRecord(%x) = %v, want %v", c.name, c.key, got, c.want)
		}
	}
}

// TestEntryKey: only a stream entry's key is one (Batch.SetAppend keeps
// only those out of the batch's index).
func TestEntryKey(t *testing.T) {
	s := []byte("s")
	entry := AppendEntryKey(nil, 0, s, 3, 10, 2)
	for _, c := range []struct {
		name string
		key  []byte
		want bool
	}{
		{"entry", entry, true},
		{"entry of a long name", AppendEntryKey(nil, 5, bytes.Repeat([]byte("k"), 300), 1, 1, 1), true},
		{"entry cut short", entry[:len(entry)-1], false},
		{"entry with more after", append(slices.Clone(entry), 0), false},
		{"node", AppendNodeKey(nil, 0, s, 3, 10, 2), false},
		{"metadata", AppendMetaKey(nil, 0, s), false},
		{"seq index", AppendSeqIndexKey(nil, 0, s, 3, 7), false},
		{"PEL", AppendPELKey(nil, 0, s, 3, []byte("g"), 10, 2), false},
		{"group", AppendGroupKey(nil, 0, s, 3, []byte("g")), false},
		{"store record", KeyCountsKey(0), false},
		{"empty", nil, false},
	} {
		if got := entryKey(c.key); got != c.want {
			t.Errorf("%s: entryKey = %v, want %v", c.name, got, c.want)
		}
	}
}
