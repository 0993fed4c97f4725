//go:build linux

package storage

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Only the write-ahead logs are wrapped, created or recycled, and only
// files with a descriptor.
func TestLogFSWrapsLogs(t *testing.T) {
	dir := t.TempDir()
	fs := logFS{FS: vfs.Default, calls: new(logCalls)}
	wrapped := func(f vfs.File, err error) bool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, ok := f.(*logFile)
		return ok
	}
	if !wrapped(fs.Create(filepath.Join(dir, "000007.log"), vfs.WriteCategoryUnspecified)) {
		t.Error("a new log is not wrapped")
	}
	if !wrapped(fs.ReuseForWrite(filepath.Join(dir, "000007.log"), filepath.Join(dir, "000009.log"), vfs.WriteCategoryUnspecified)) {
		t.Error("a recycled log is not wrapped")
	}
	if wrapped(fs.Create(filepath.Join(dir, "000008.sst"), vfs.WriteCategoryUnspecified)) {
		t.Error("a table is wrapped")
	}
	mem := logFS{FS: vfs.NewMem(), calls: new(logCalls)}
	if wrapped(mem.Create("000001.log", vfs.WriteCategoryUnspecified)) {
		t.Error("an in-memory log is wrapped")
	}
}

// A log file writes and syncs the same bytes whether a caller waits
// inline (raw system calls) or not, and reports the same failures.
func TestLogFileWrites(t *testing.T) {
	for _, inline := range []bool{false, true} {
		calls := new(logCalls)
		if inline {
			calls.inline.Add(1)
		}
		fs := logFS{FS: vfs.Default, calls: calls}
		name := filepath.Join(t.TempDir(), "000001.log")
		f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		big := make([]byte, 300<<10)
		for i := range big {
			big[i] = byte(rand.IntN(256))
		}
		var want []byte
		for _, p := range [][]byte{[]byte("abc"), big, []byte("z")} {
			if n, err := f.Write(p); n != len(p) || err != nil {
				t.Fatalf("inline %v: Write(%d bytes) = %d, %v", inline, len(p), n, err)
			}
			want = append(want, p...)
		}
		if err := f.SyncData(); err != nil {
			t.Fatalf("inline %v: SyncData: %v", inline, err)
		}
		if got, want := calls.raw.Load(), map[bool]uint64{false: 0, true: 1}[inline]; got != want {
			t.Errorf("inline %v: %d raw syncs, want %d", inline, got, want)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("inline %v: the file holds %d bytes, not the %d written", inline, len(got), len(want))
		}

		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// The raw calls fail as write(2) and fdatasync(2) do: here on a
	// descriptor past any open one.
	calls := new(logCalls)
	calls.inline.Add(1)
	f := &logFile{File: nil, fd: 1 << 30, calls: calls}
	if _, err := f.Write([]byte("x")); !errors.Is(err, syscall.EBADF) {
		t.Errorf("Write to a bad descriptor: %v, want EBADF", err)
	}
	if err := f.SyncData(); !errors.Is(err, syscall.EBADF) {
		t.Errorf("SyncData of a bad descriptor: %v, want EBADF", err)
	}
	if calls.raw.Load() != 0 {
		t.Errorf("a failed sync counted")
	}
}

// SyncAppliedInline makes the applied writes durable with a raw sync of
// the store's log, SyncApplied with Pebble's own.
func TestSyncAppliedInline(t *testing.T) {
	db, err := Open(Options{Dir: t.TempDir(), Sync: SyncAlways, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	applyOne(t, db, "k", "v")
	before, raw := db.Syncs(), db.log.raw.Load()
	if err := db.SyncApplied(1); err != nil {
		t.Fatal(err)
	}
	if db.log.raw.Load() != raw {
		t.Errorf("SyncApplied ran a raw sync")
	}
	applyOne(t, db, "k", "w")
	if err := db.SyncAppliedInline(3); err != nil {
		t.Fatal(err)
	}
	if db.Durable() != db.Applied() {
		t.Errorf("Durable %d after SyncAppliedInline, Applied %d", db.Durable(), db.Applied())
	}
	if db.log.raw.Load() != raw+1 {
		t.Errorf("SyncAppliedInline ran %d raw syncs, want 1", db.log.raw.Load()-raw)
	}
	if db.log.inline.Load() != 0 {
		t.Errorf("%d callers still counted inline", db.log.inline.Load())
	}
	if after := db.Syncs(); after.Count != before.Count+2 || after.Writers != before.Writers+4 {
		t.Errorf("two syncs for 1 and 3 writers: %+v, was %+v", after, before)
	}
}
