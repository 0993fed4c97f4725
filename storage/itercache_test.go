package storage

import (
	"slices"
	"testing"
)

// TestIterCache: the kept iterator is lent again while nothing is
// written, a write (committed or applied) makes the next read open a
// fresh one that shows it, a read while the iterator is lent gets one of
// its own, and nothing is left open when the store closes.
func TestIterCache(t *testing.T) {
	db, err := Open(InMemory())
	if err != nil {
		t.Fatal(err)
	}
	put := func(key string, apply bool) {
		t.Helper()
		b := db.NewBatch()
		if err := b.Set([]byte(key), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if apply {
			err = b.Apply()
			b.Close()
		} else {
			err = b.Commit()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	c := db.NewIterCache()
	scan := func(lo, hi string) []string {
		t.Helper()
		it, err := c.NewIter([]byte(lo), []byte(hi))
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for ok := it.First(); ok; ok = it.Next() {
			keys = append(keys, string(it.Key()))
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	put("a1", false)
	put("a2", false)
	if got := scan("a", "b"); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Fatalf("scan: %q", got)
	}
	kept := c.opened
	if got := scan("a2", "b"); !slices.Equal(got, []string{"a2"}) || c.opened != kept {
		t.Fatalf("new bounds, nothing written: %q, opened %d more", got, c.opened-kept)
	}
	put("a3", false)
	if got := scan("a", "b"); !slices.Equal(got, []string{"a1", "a2", "a3"}) || c.opened != kept+1 {
		t.Fatalf("after a commit: %q, opened %d more", got, c.opened-kept)
	}
	put("a4", true)
	if got := scan("a", "b"); !slices.Equal(got, []string{"a1", "a2", "a3", "a4"}) {
		t.Fatalf("after an apply: %q", got)
	}

	// Lent: a second reader gets an iterator of its own.
	outer, err := c.NewIter([]byte("a"), []byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	if !outer.First() || string(outer.Key()) != "a1" {
		t.Fatal("outer: not on a1")
	}
	if got := scan("a3", "b"); !slices.Equal(got, []string{"a3", "a4"}) {
		t.Fatalf("inner scan: %q", got)
	}
	if !outer.Next() || string(outer.Key()) != "a2" {
		t.Fatal("outer moved by the inner scan")
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if err := outer.Close(); err != nil {
		t.Fatal("second Close:", err)
	}

	// Stale and released; then the store closes with nothing open.
	put("a5", false)
	if err := c.ReleaseStale(); err != nil || c.it != nil {
		t.Fatalf("ReleaseStale after a write: %v, kept %v", err, c.it != nil)
	}
	scan("a", "b")
	if err := c.ReleaseStale(); err != nil || c.it == nil {
		t.Fatalf("ReleaseStale with nothing written: %v, kept %v", err, c.it != nil)
	}
	if err := c.Release(); err != nil || c.it != nil {
		t.Fatalf("Release: %v, kept %v", err, c.it != nil)
	}
	if err := db.Close(); err != nil {
		t.Fatal("close:", err)
	}
}
