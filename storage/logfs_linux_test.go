//go:build linux

package storage

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The journal's segments are wrapped on the real file system only.
func TestJournalSegmentsWrapped(t *testing.T) {
	for _, c := range []struct {
		fs   vfs.FS
		dir  string
		raw  bool
		want bool
	}{
		{vfs.Default, t.TempDir(), true, true},
		{vfs.NewMem(), "mem", false, false},
	} {
		j := newJournal(c.fs, c.dir, c.raw, 0, new(DB))
		if err := c.fs.MkdirAll(j.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := j.create(1)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.f.(*logFile); ok != c.want {
			t.Errorf("raw %v: segment wrapped %v, want %v", c.raw, ok, c.want)
		}
		s.f.Close()
	}
}

// A log file writes and syncs the same bytes whether its calls are raw
// (appendfsync always) or not.
func TestLogFileWrites(t *testing.T) {
	for _, raw := range []bool{false, true} {
		db := new(DB)
		if raw {
			db.SetSyncMode(SyncAlways)
		}
		name := filepath.Join(t.TempDir(), "000001.journal")
		f, err := vfs.Default.Create(name, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		f = rawLogFile(f, db)
		big := make([]byte, 300<<10)
		for i := range big {
			big[i] = byte(rand.IntN(256))
		}
		var want []byte
		for _, p := range [][]byte{[]byte("abc"), big, []byte("z")} {
			if n, err := f.Write(p); n != len(p) || err != nil {
				t.Fatalf("raw calls %v: Write(%d bytes) = %d, %v", raw, len(p), n, err)
			}
			want = append(want, p...)
		}
		if err := f.SyncData(); err != nil {
			t.Fatalf("raw calls %v: SyncData: %v", raw, err)
		}
		if got, want := db.rawLogSyncs.Load(), map[bool]uint64{false: 0, true: 1}[raw]; got != want {
			t.Errorf("raw calls %v: %d raw syncs, want %d", raw, got, want)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("raw calls %v: the file holds %d bytes, not the %d written", raw, len(got), len(want))
		}

		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// The raw calls fail as write(2) and fdatasync(2) do: here on a
	// descriptor past any open one.
	db := new(DB)
	db.SetSyncMode(SyncAlways)
	f := &logFile{File: nil, fd: 1 << 30, db: db}
	if _, err := f.Write([]byte("x")); !errors.Is(err, syscall.EBADF) {
		t.Errorf("Write to a bad descriptor: %v, want EBADF", err)
	}
	if err := f.SyncData(); !errors.Is(err, syscall.EBADF) {
		t.Errorf("SyncData of a bad descriptor: %v, want EBADF", err)
	}
	if db.rawLogSyncs.Load() != 0 {
		t.Errorf("a failed sync counted")
	}
}

// With appendfsync always the store's log syncs are raw system calls,
// unless goroutines wait for a scheduler slot; with everysec they are
// Go's, and CONFIG SET's changes of the mode switch them.
func TestRawLogSyncsWithAlways(t *testing.T) {
	var wanted atomic.Bool
	db, err := Open(Options{Dir: t.TempDir(), Sync: SyncAlways, CacheSize: 8 << 20, slotWanted: wanted.Load})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		mode   SyncMode
		wanted bool
		raw    bool
	}{
		{SyncAlways, false, true},
		{SyncEverySec, false, false},
		{SyncAlways, true, false},
		{SyncAlways, false, true},
		{SyncNo, false, false},
	} {
		db.SetSyncMode(c.mode)
		wanted.Store(c.wanted)
		raw := db.rawLogSyncs.Load()
		applyOne(t, db, "k", "v")
		if err := db.SyncApplied(1); err != nil {
			t.Fatal(err)
		}
		if db.Durable() != db.Applied() {
			t.Errorf("mode %v: Durable %d after SyncApplied, Applied %d", c.mode, db.Durable(), db.Applied())
		}
		want := uint64(0)
		if c.raw {
			want = 1
		}
		if got := db.rawLogSyncs.Load() - raw; got != want {
			t.Errorf("mode %v, slot wanted %v: %d raw syncs, want %d", c.mode, c.wanted, got, want)
		}
	}
}
