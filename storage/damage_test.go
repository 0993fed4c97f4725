package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// A flipped byte in a table is an error of the reads that touch its
// block, ErrDamaged on one line naming the file, counted and logged, and
// never an exit of the process (Pebble's default is Fatalf); the rest of
// the store is read as before.
func TestDamagedBlockIsAReadError(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Dir: dir, CacheSize: 8 << 20}
	db, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	value := []byte(strings.Repeat("value-", 20))
	for i := uint64(1); i <= 20000; i++ {
		b.Set(AppendEntryKey(nil, 0, []byte("s"), 1, i, 0), append(value, byte(i), byte(i>>8)))
	}
	b.Set(AppendMetaKey(nil, 0, []byte("s")), []byte("meta"))
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	flipMiddleOfLargestTable(t, dir)

	db, err = Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	it, err := db.NewIter(AppendEntryKey(nil, 0, []byte("s"), 1, 0, 0), AppendEntryKey(nil, 0, []byte("s"), 1, 1<<62, 0))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	err = it.Close()
	if !errors.Is(err, ErrDamaged) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("scan over a damaged block: %d entries, then %q; want ErrDamaged, one line, naming the checksum", n, err)
	}
	if n >= 20000 {
		t.Errorf("the scan read all %d entries past a damaged block", n)
	}
	if d := db.Damage(); d.Reads == 0 || filepath.Dir(d.LastFile) != dir {
		t.Errorf("Damage() = %+v; want a read counted, naming a file of %s", d, dir)
	}
	if v, ok, err := db.Get(AppendMetaKey(nil, 0, []byte("s"))); err != nil || !ok || string(v) != "meta" {
		t.Errorf("Get of an undamaged record: %q, %v, %v", v, ok, err)
	}
}

// flipMiddleOfLargestTable flips a byte in the middle of dir's largest
// table, inside a data block.
func flipMiddleOfLargestTable(t *testing.T, dir string) {
	t.Helper()
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	var largest string
	var size int64
	for _, f := range tables {
		if st, err := os.Stat(f); err == nil && st.Size() > size {
			largest, size = f, st.Size()
		}
	}
	if size < 64<<10 {
		t.Fatalf("largest table %s: %d bytes; want one of many blocks", largest, size)
	}
	f, err := os.OpenFile(largest, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	one := make([]byte, 1)
	if _, err := f.ReadAt(one, size/2); err != nil {
		t.Fatal(err)
	}
	one[0] ^= 0x5a
	if _, err := f.WriteAt(one, size/2); err != nil {
		t.Fatal(err)
	}
}

// readError leaves every other error as it is.
func TestReadErrorKeepsOtherErrors(t *testing.T) {
	for _, err := range []error{nil, pebble.ErrNotFound, os.ErrClosed} {
		if got := readError(err); got != err {
			t.Errorf("readError(%v) = %v", err, got)
		}
	}
}
