package storage

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

type recordEntry struct {
	ms, seq uint64
	entry   []byte
}

func appendRecord(keyMs, keySeq uint64, es []recordEntry) []byte {
	v := AppendRecordStart(nil)
	pm, ps := keyMs, keySeq
	for _, e := range es {
		v = AppendRecordEntry(v, pm, ps, e.ms, e.seq, e.entry)
		pm, ps = e.ms, e.seq
	}
	return v
}

func walkRecord(keyMs, keySeq uint64, v []byte) ([]recordEntry, error) {
	r, err := NewRecordEntries(keyMs, keySeq, v)
	if err != nil {
		return nil, err
	}
	var out []recordEntry
	for {
		ms, seq, e, ok, err := r.Next()
		if err != nil || !ok {
			return out, err
		}
		out = append(out, recordEntry{ms, seq, e})
	}
}

// A Record gives back the IDs and values it was built with, whatever the
// gaps between the IDs and the key, and a Record is never taken for an
// Entry.
func TestRecordRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		keyMs, keySeq := r.Uint64N(1<<40), r.Uint64N(5)
		ms, seq := keyMs, keySeq
		var es []recordEntry
		for j := range 1 + r.IntN(20) {
			switch {
			case j == 0 && r.IntN(2) == 0: // the key's own ID
			case r.IntN(3) == 0:
				ms += 1 + r.Uint64N(1<<20)
				seq = r.Uint64N(1 << 62)
			default:
				seq += 1 + r.Uint64N(1<<10)
			}
			es = append(es, recordEntry{ms, seq, AppendEntryValue(nil, uint64(i*100+j), [][]byte{[]byte("f"), bytes.Repeat([]byte{'v'}, r.IntN(300))})})
		}
		v := appendRecord(keyMs, keySeq, es)
		if !IsEntryRecord(v) {
			t.Fatal("a Record is not recognised as one")
		}
		if _, _, err := DecodeEntryHeader(v); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("a Record decoded as an Entry: %v", err)
		}
		got, err := walkRecord(keyMs, keySeq, v)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(es) {
			t.Fatalf("%d entries back, want %d", len(got), len(es))
		}
		for j := range es {
			if got[j].ms != es[j].ms || got[j].seq != es[j].seq || !bytes.Equal(got[j].entry, es[j].entry) {
				t.Fatalf("entry %d: %d-%d %q, want %d-%d %q", j, got[j].ms, got[j].seq, got[j].entry, es[j].ms, es[j].seq, es[j].entry)
			}
		}
	}
	if IsEntryRecord(AppendEntryValue(nil, 1, [][]byte{[]byte("f"), []byte("v")})) ||
		IsEntryRecord(AppendEntryValueSet(nil, 1, 1, [][]byte{[]byte("f"), []byte("v")})) {
		t.Fatal("an Entry taken for a Record")
	}
}

// A Record cut short, or whose IDs go backward or repeat, is corrupt.
func TestRecordCorrupt(t *testing.T) {
	entry := AppendEntryValue(nil, 1, [][]byte{[]byte("f"), []byte("v")})
	good := appendRecord(5, 0, []recordEntry{{5, 0, entry}, {5, 1, entry}, {7, 0, entry}})
	for cut := 2; cut < len(good); cut++ {
		if es, err := walkRecord(5, 0, good[:cut]); err == nil && len(es) == 3 {
			t.Fatalf("cut at %d: read whole", cut)
		}
	}
	for _, tc := range []struct {
		name string
		v    []byte
	}{
		{"not a record", entry},
		{"repeated ID", appendRecord(5, 0, []recordEntry{{5, 1, entry}, {5, 1, entry}})},
		{"length past the end", append(AppendRecordStart(nil), 0, 0, 200, 'x')},
		{"truncated varint", append(AppendRecordStart(nil), 0x80)},
	} {
		if _, err := walkRecord(5, 0, tc.v); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
}

func FuzzRecordEntries(f *testing.F) {
	entry := AppendEntryValue(nil, 1, [][]byte{[]byte("f"), []byte("v")})
	f.Add(uint64(5), uint64(0), appendRecord(5, 0, []recordEntry{{5, 0, entry}, {6, 3, entry}}))
	f.Fuzz(func(t *testing.T, keyMs, keySeq uint64, v []byte) {
		es, err := walkRecord(keyMs, keySeq, v)
		if err != nil {
			return
		}
		// What walks cleanly comes back the same when built again.
		if again := appendRecord(keyMs, keySeq, es); !bytes.Equal(again, v) {
			walked, _ := walkRecord(keyMs, keySeq, again)
			if len(walked) != len(es) {
				t.Fatalf("rebuilt record walks to %d entries, want %d", len(walked), len(es))
			}
		}
		for i := 1; i < len(es); i++ {
			if es[i].ms < es[i-1].ms || es[i].ms == es[i-1].ms && es[i].seq <= es[i-1].seq {
				t.Fatalf("entry %d's ID %d-%d not above %d-%d", i, es[i].ms, es[i].seq, es[i-1].ms, es[i-1].seq)
			}
		}
	})
}
