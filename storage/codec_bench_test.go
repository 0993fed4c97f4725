package storage

import (
	"strconv"
	"strings"
	"testing"
)

// benchFields is an XADD-shaped entry: three fields, about 60 bytes of
// names and values, as the tuning and bench loads use.
var benchFields = [][]byte{
	[]byte("event"), []byte("page_view"),
	[]byte("user"), []byte("user:104729"),
	[]byte("path"), []byte("/products/7919?ref=home"),
}

// benchSets resolves field set 1 to benchFields' names.
type benchSets struct{}

var benchNames = [][]byte{benchFields[0], benchFields[2], benchFields[4]}

func (benchSets) FieldSet(id uint64) ([][]byte, error) {
	if id != 1 {
		return nil, ErrCorrupt
	}
	return benchNames, nil
}

// The entry value codec, with the field names in the value and with them
// left to a field set (values only).
func BenchmarkCodecEntryValue(b *testing.B) {
	b.Run("Append/names", func(b *testing.B) {
		buf := make([]byte, 0, 128)
		b.ReportAllocs()
		for b.Loop() {
			buf = AppendEntryValue(buf[:0], 1234567, benchFields)
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("Append/set", func(b *testing.B) {
		buf := make([]byte, 0, 128)
		b.ReportAllocs()
		for b.Loop() {
			buf = AppendEntryValueSet(buf[:0], 1234567, 1, benchFields)
		}
		b.SetBytes(int64(len(buf)))
	})
	for _, c := range []struct {
		name string
		v    []byte
	}{
		{"names", AppendEntryValue(nil, 1234567, benchFields)},
		{"set", AppendEntryValueSet(nil, 1234567, 1, benchFields)},
	} {
		b.Run("Decode/"+c.name, func(b *testing.B) {
			dst := make([][]byte, 0, 8)
			b.ReportAllocs()
			b.SetBytes(int64(len(c.v)))
			for b.Loop() {
				var err error
				var h EntryHeader
				if h, dst, err = DecodeEntryValue(c.v, benchSets{}, dst[:0]); err != nil || h.Seq != 1234567 {
					b.Fatalf("DecodeEntryValue: seq %d, %v", h.Seq, err)
				}
			}
			if len(dst) != len(benchFields) {
				b.Fatalf("decoded %d strings, want %d", len(dst), len(benchFields))
			}
		})
	}
}

// BenchmarkCodecKeys builds the keys one XADD and one XRANGE step touch,
// for a short and a long stream name (the name is copied into every key).
func BenchmarkCodecKeys(b *testing.B) {
	for _, name := range []string{"s", "orders:" + strings.Repeat("x", 57)} {
		key := []byte(name)
		b.Run("AppendEntryKey/klen="+strconv.Itoa(len(key)), func(b *testing.B) {
			buf := make([]byte, 0, 128)
			b.ReportAllocs()
			var ms uint64
			for b.Loop() {
				ms++
				buf = AppendEntryKey(buf[:0], 0, key, 7, ms, 0)
			}
		})
		b.Run("AppendNodeKey/klen="+strconv.Itoa(len(key)), func(b *testing.B) {
			buf := make([]byte, 0, 128)
			b.ReportAllocs()
			var ms uint64
			for b.Loop() {
				ms++
				buf = AppendNodeKey(buf[:0], 0, key, 7, ms, 0)
			}
		})
		b.Run("AppendMetaKey/klen="+strconv.Itoa(len(key)), func(b *testing.B) {
			buf := make([]byte, 0, 128)
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendMetaKey(buf[:0], 0, key)
			}
		})
		b.Run("AppendPELKey/klen="+strconv.Itoa(len(key)), func(b *testing.B) {
			buf := make([]byte, 0, 128)
			group := []byte("workers")
			b.ReportAllocs()
			var ms uint64
			for b.Loop() {
				ms++
				buf = AppendPELKey(buf[:0], 0, key, 7, group, ms, 0)
			}
		})
	}
	b.Run("DecodeIDSuffix", func(b *testing.B) {
		k := AppendEntryKey(nil, 0, []byte("s"), 7, 1700000000123, 5)
		b.ReportAllocs()
		for b.Loop() {
			ms, seq, err := DecodeIDSuffix(k)
			if err != nil || ms != 1700000000123 || seq != 5 {
				b.Fatalf("DecodeIDSuffix = %d, %d, %v", ms, seq, err)
			}
		}
	})
	b.Run("DecodeMetaKey", func(b *testing.B) {
		k := AppendMetaKey(nil, 3, []byte("orders"))
		b.ReportAllocs()
		for b.Loop() {
			db, key, err := DecodeMetaKey(k)
			if err != nil || db != 3 || len(key) != 6 {
				b.Fatalf("DecodeMetaKey = %d, %q, %v", db, key, err)
			}
		}
	})
}
