package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A flipped byte in a table of a stopped server's store: the server
// starts, the reads that touch the damaged block answer an error naming
// it, every other read and client is served, and INFO and the log say
// which file. The process never exits over it.
func TestDamagedTableIsAReadError(t *testing.T) {
	eddyOnly(t, "Redis keeps its data in memory")
	e := startEddy(t)
	rdb := e.Client()
	ctx := context.Background()
	for i := 0; i < 20000; i += 500 {
		pipe := rdb.Pipeline()
		for j := i; j < i+500; j++ {
			pipe.Do(ctx, "XADD", "big", "*", "field", strings.Repeat("v", 100))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.Do(ctx, "XADD", "small", "1-1", "a", "b").Err(); err != nil {
		t.Fatal(err)
	}
	e.Stop()
	flipLargestTable(t, e.Dir())
	e.Restart()
	rdb = e.Client()

	err := rdb.Do(ctx, "XRANGE", "big", "-", "+").Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR store damaged: file ") || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("XRANGE over the damaged block: %v; want ERR store damaged naming the file", err)
	}
	if got, err := rdb.Do(ctx, "XRANGE", "small", "-", "+").Slice(); err != nil || len(got) != 1 {
		t.Errorf("XRANGE of an undamaged stream: %v, %v", got, err)
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after the damaged read: %v", err)
	}
	info, err := rdb.Info(ctx, "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info, "eddy_damaged_reads:") || strings.Contains(info, "eddy_damaged_reads:0\r\n") || !strings.Contains(info, ".sst") {
		t.Errorf("INFO persistence does not report the damaged read:\n%s", info)
	}
}

// flipLargestTable flips a byte in the middle of dir's largest table.
func flipLargestTable(t *testing.T, dir string) {
	t.Helper()
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	var largest string
	var size int64
	for _, f := range tables {
		if st, err := os.Stat(f); err == nil && st.Size() > size {
			largest, size = f, st.Size()
		}
	}
	f, err := os.OpenFile(largest, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, size/2); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, size/2); err != nil {
		t.Fatal(err)
	}
}
