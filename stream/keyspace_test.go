package stream

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

// ksEnv is an Engine on an in-memory store with a settable clock and a
// record of the changes its commits report.
type ksEnv struct {
	t   *testing.T
	e   *Engine
	now atomic.Int64

	mu      sync.Mutex
	changes []Change // guarded by mu
}

const ksT0 = 1_700_000_000_000 // the test clock's start, unix ms

// newKS returns a ksEnv; tweaks adjust the Engine's options.
func newKS(t *testing.T, tweaks ...func(*Options)) *ksEnv {
	t.Helper()
	k := &ksEnv{t: t}
	k.now.Store(ksT0)
	db, err := storage.Open(storage.InMemory())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	opts := Options{
		Now: k.now.Load,
		OnCommit: func(cs []Change) {
			k.mu.Lock()
			k.changes = append(k.changes, cs...)
			k.mu.Unlock()
		},
	}
	for _, tw := range tweaks {
		tw(&opts)
	}
	k.e, err = Open(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// takeChanges returns the changes noted since the last call, as
// "kind db key" strings.
func (k *ksEnv) takeChanges() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, c := range k.changes {
		name := [...]string{Written: "written", Appended: "appended", Deleted: "deleted", Flushed: "flushed"}[c.Kind]
		if c.AllDBs {
			out = append(out, name+" all")
			continue
		}
		out = append(out, fmt.Sprintf("%s %d %s", name, c.DB, c.Key))
	}
	k.changes = nil
	return out
}

func (k *ksEnv) update(fn func(tx *Tx) error) {
	k.t.Helper()
	if err := k.e.Update(fn); err != nil {
		k.t.Fatal(err)
	}
}

func (k *ksEnv) view(fn func(tx *Tx) error) {
	k.t.Helper()
	if err := k.e.View(fn); err != nil {
		k.t.Fatal(err)
	}
}

// set stores a string with an optional expiry (unix ms, 0 none).
func (k *ksEnv) set(db int, key, val string, at int64) {
	k.t.Helper()
	k.update(func(tx *Tx) error {
		_, _, _, err := tx.Set(db, []byte(key), []byte(val), SetOptions{ExpireAt: at})
		return err
	})
}

// stream makes key a stream of n entries with IDs 1-0 .. n-0.
func (k *ksEnv) stream(db int, key string, n int) {
	k.t.Helper()
	k.update(func(tx *Tx) error {
		for i := 1; i <= n; i++ {
			a := XAddArgs{ID: ID{Ms: uint64(i)}, Fields: [][]byte{[]byte("f"), []byte(fmt.Sprint(i))}}
			if _, _, err := tx.XAdd(db, []byte(key), &a); err != nil {
				return err
			}
		}
		return nil
	})
}

// meta reads key's raw metadata record, expired or not.
func (k *ksEnv) meta(db int, key string) (storage.Meta, bool) {
	k.t.Helper()
	v, ok, err := k.e.db.Get(storage.AppendMetaKey(nil, db, []byte(key)))
	if err != nil {
		k.t.Fatal(err)
	}
	if !ok {
		return storage.Meta{}, false
	}
	m, err := storage.DecodeMeta(v)
	if err != nil {
		k.t.Fatal(err)
	}
	return m, true
}

// countRange counts the committed records in [lo, hi).
func (k *ksEnv) countRange(lo, hi []byte) int {
	k.t.Helper()
	it, err := k.e.db.NewIter(lo, hi)
	if err != nil {
		k.t.Fatal(err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if err := it.Close(); err != nil {
		k.t.Fatal(err)
	}
	return n
}

// checkIndex fails unless the expiry index holds exactly one entry per
// metadata record with an expiry, at that expiry.
func (k *ksEnv) checkIndex() {
	k.t.Helper()
	want := map[string]bool{}
	it, err := k.e.db.NewIter(storage.AllData())
	if err != nil {
		k.t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		if !storage.IsMetaKey(it.Key()) {
			continue
		}
		db, key, err := storage.DecodeMetaKey(it.Key())
		if err != nil {
			k.t.Fatal(err)
		}
		m, err := storage.DecodeMeta(it.Value())
		if err != nil {
			k.t.Fatal(err)
		}
		if m.ExpireAt != 0 {
			want[string(storage.AppendExpiryKey(nil, m.ExpireAt, db, key))] = true
		}
	}
	it.Close()
	lo, hi := storage.ExpiryBounds(1<<62 - 1)
	it, err = k.e.db.NewIter(lo, hi)
	if err != nil {
		k.t.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if !want[string(it.Key())] {
			at, db, key, _ := storage.DecodeExpiryKey(it.Key())
			k.t.Errorf("stray expiry index entry: db %d key %q at %d", db, key, at)
		}
		delete(want, string(it.Key()))
	}
	for ek := range want {
		at, db, key, _ := storage.DecodeExpiryKey([]byte(ek))
		k.t.Errorf("missing expiry index entry: db %d key %q at %d", db, key, at)
	}
	k.checkKeyIndex()
}

func TestTypeExistsDel(t *testing.T) {
	k := newKS(t)
	k.set(0, "s", "v", 0)
	k.set(0, "gone", "v", ksT0+10)
	k.stream(0, "x", 3)
	k.set(1, "other", "v", 0)
	k.now.Store(ksT0 + 10) // "gone" has expired
	k.takeChanges()

	cases := []struct {
		key, typ string
	}{
		{"s", "string"}, {"x", "stream"}, {"missing", "none"}, {"gone", "none"}, {"other", "none"},
	}
	for _, c := range cases {
		k.view(func(tx *Tx) error {
			typ, err := tx.Type(0, []byte(c.key))
			if err != nil || typ != c.typ {
				t.Errorf("Type(%q) = %q, %v; want %q", c.key, typ, err, c.typ)
			}
			ok, err := tx.Exists(0, []byte(c.key))
			if err != nil || ok != (c.typ != "none") {
				t.Errorf("Exists(%q) = %v, %v", c.key, ok, err)
			}
			return nil
		})
	}
	// Reads change nothing but reclaim the expired key they met.
	if got := k.takeChanges(); !slices.Equal(got, []string{"deleted 0 gone"}) {
		t.Fatalf("reads noted changes: %v", got)
	}

	dels := []struct {
		key     string
		want    bool
		changes []string
	}{
		{"s", true, []string{"deleted 0 s"}},
		{"s", false, nil},
		{"x", true, []string{"deleted 0 x"}},
		{"gone", false, nil}, // the reads above reclaimed it already
		{"other", false, nil},
	}
	for _, d := range dels {
		k.update(func(tx *Tx) error {
			ok, err := tx.Del(0, []byte(d.key))
			if err != nil || ok != d.want {
				t.Errorf("Del(%q) = %v, %v; want %v", d.key, ok, err, d.want)
			}
			return nil
		})
		if got := k.takeChanges(); !slices.Equal(got, d.changes) {
			t.Errorf("Del(%q) noted %v; want %v", d.key, got, d.changes)
		}
	}
	k.checkIndex()
	// The deleted stream's data is left to the collector: a garbage
	// record covers it.
	glo, ghi := storage.GarbageBounds()
	lo, hi := storage.DataPrefixDB(0)
	if k.countRange(glo, ghi) == 0 && k.countRange(lo, hi) != 0 {
		t.Fatal("stream data left without a garbage record")
	}
}

func TestReadOnlyWrites(t *testing.T) {
	k := newKS(t)
	k.set(0, "s", "1", 0)
	writes := map[string]func(tx *Tx) error{
		"Del":     func(tx *Tx) error { _, err := tx.Del(0, []byte("s")); return err },
		"FlushDB": func(tx *Tx) error { return tx.FlushDB(0) },
		"Set":     func(tx *Tx) error { _, _, _, err := tx.Set(0, []byte("s"), nil, SetOptions{}); return err },
		"IncrBy":  func(tx *Tx) error { _, err := tx.IncrBy(0, []byte("s"), 1); return err },
		"Expire":  func(tx *Tx) error { _, err := tx.Expire(0, []byte("s"), ksT0+5, ExpireAlways); return err },
	}
	for name, fn := range writes {
		if err := k.e.View(fn); !errors.Is(err, ErrReadOnlyTx) {
			t.Errorf("%s in View: %v; want ErrReadOnlyTx", name, err)
		}
	}
}

func TestRename(t *testing.T) {
	type key struct {
		name, val string // val "stream:N" makes a stream of N entries
		at        int64
	}
	cases := []struct {
		name     string
		keys     []key
		src, dst string
		nx       bool
		want     bool
		err      error
		after    map[string]string // key → value ("stream:N"), "" for missing
		ttl      map[string]int64  // key → ExpireAt
		changes  []string
	}{
		{
			name: "string", keys: []key{{"a", "1", 0}}, src: "a", dst: "b", want: true,
			after: map[string]string{"a": "", "b": "1"}, changes: []string{"deleted 0 a", "written 0 b"},
		},
		{
			name: "moves the TTL", keys: []key{{"a", "1", ksT0 + 500}, {"b", "2", ksT0 + 900}}, src: "a", dst: "b", want: true,
			after: map[string]string{"a": "", "b": "1"}, ttl: map[string]int64{"b": ksT0 + 500},
			changes: []string{"deleted 0 a", "written 0 b"},
		},
		{
			name: "clears the destination's TTL", keys: []key{{"a", "1", 0}, {"b", "2", ksT0 + 900}}, src: "a", dst: "b", want: true,
			after: map[string]string{"b": "1"}, ttl: map[string]int64{"b": 0},
			changes: []string{"deleted 0 a", "written 0 b"},
		},
		{
			name: "same TTL on both", keys: []key{{"a", "1", ksT0 + 900}, {"b", "2", ksT0 + 900}}, src: "a", dst: "b", want: true,
			after: map[string]string{"b": "1"}, ttl: map[string]int64{"b": ksT0 + 900},
			changes: []string{"deleted 0 a", "written 0 b"},
		},
		{name: "missing source", src: "a", dst: "b", err: ErrNoSuchKey},
		{name: "expired source", keys: []key{{"a", "1", ksT0}}, src: "a", dst: "b", err: ErrNoSuchKey},
		{
			name: "nx onto existing", keys: []key{{"a", "1", 0}, {"b", "2", 0}}, src: "a", dst: "b", nx: true, want: false,
			after: map[string]string{"a": "1", "b": "2"},
		},
		{
			name: "nx onto expired", keys: []key{{"a", "1", 0}, {"b", "2", ksT0}}, src: "a", dst: "b", nx: true, want: true,
			after: map[string]string{"a": "", "b": "1"}, changes: []string{"deleted 0 b", "deleted 0 a", "written 0 b"},
		},
		{
			name: "onto itself", keys: []key{{"a", "1", ksT0 + 5}}, src: "a", dst: "a", want: true,
			after: map[string]string{"a": "1"}, ttl: map[string]int64{"a": ksT0 + 5},
		},
		{name: "nx onto itself", keys: []key{{"a", "1", 0}}, src: "a", dst: "a", nx: true, want: false},
		{name: "missing onto itself", src: "a", dst: "a", err: ErrNoSuchKey},
		{
			name: "string onto stream", keys: []key{{"a", "1", 0}, {"s", "stream:5", 0}}, src: "a", dst: "s", want: true,
			after: map[string]string{"a": "", "s": "1"}, changes: []string{"deleted 0 a", "written 0 s"},
		},
		{
			name: "stream onto string", keys: []key{{"s", "stream:7", ksT0 + 50}, {"a", "1", 0}}, src: "s", dst: "a", want: true,
			after: map[string]string{"s": "", "a": "stream:7"}, ttl: map[string]int64{"a": ksT0 + 50},
			changes: []string{"deleted 0 s", "written 0 a"},
		},
		{
			name: "stream onto stream", keys: []key{{"s", "stream:300", 0}, {"t", "stream:2", 0}}, src: "s", dst: "t", want: true,
			after: map[string]string{"s": "", "t": "stream:300"}, changes: []string{"deleted 0 s", "written 0 t"},
		},
		{
			// "a" and "ab": a prefix of the other's name.
			name: "stream to a longer name", keys: []key{{"a", "stream:3", 0}, {"ab", "stream:4", 0}}, src: "a", dst: "abc", want: true,
			after: map[string]string{"a": "", "ab": "stream:4", "abc": "stream:3"}, changes: []string{"deleted 0 a", "written 0 abc"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newKS(t)
			for _, kk := range c.keys {
				var n int
				if _, err := fmt.Sscanf(kk.val, "stream:%d", &n); err == nil {
					k.stream(0, kk.name, n)
					if kk.at != 0 {
						k.update(func(tx *Tx) error {
							_, err := tx.Expire(0, []byte(kk.name), kk.at, ExpireAlways)
							return err
						})
					}
				} else {
					k.set(0, kk.name, kk.val, kk.at)
				}
			}
			k.now.Store(ksT0)
			k.takeChanges()
			err := k.e.Update(func(tx *Tx) error {
				ok, err := tx.Rename(0, []byte(c.src), []byte(c.dst), c.nx)
				if err == nil && ok != c.want {
					t.Errorf("Rename = %v; want %v", ok, c.want)
				}
				return err
			})
			if !errors.Is(err, c.err) {
				t.Fatalf("Rename: %v; want %v", err, c.err)
			}
			if got := k.takeChanges(); !slices.Equal(got, c.changes) {
				t.Errorf("noted %v; want %v", got, c.changes)
			}
			for name, want := range c.after {
				if got := k.describe(0, name); got != want {
					t.Errorf("%s = %q; want %q", name, got, want)
				}
			}
			for name, want := range c.ttl {
				if m, _ := k.meta(0, name); m.ExpireAt != want {
					t.Errorf("%s expires at %d; want %d", name, m.ExpireAt, want)
				}
			}
			k.checkIndex()
			k.checkNoOrphanData()
		})
	}
}

// describe returns a key's value as the rename cases write it: the string,
// "stream:N" for a stream whose entries are exactly 1-0..N-0 with field f
// and value i, or "" when missing.
func (k *ksEnv) describe(db int, key string) string {
	k.t.Helper()
	var out string
	k.view(func(tx *Tx) error {
		typ, err := tx.Type(db, []byte(key))
		if err != nil {
			return err
		}
		switch typ {
		case "string":
			v, _, err := tx.Get(db, []byte(key))
			out = string(v)
			return err
		case "stream":
			es, err := tx.XRange(db, []byte(key), ID{}, MaxID, -1, false)
			if err != nil {
				return err
			}
			for i, e := range es {
				if e.ID != (ID{Ms: uint64(i + 1)}) || len(e.Fields) != 2 || string(e.Fields[1]) != fmt.Sprint(i+1) {
					return fmt.Errorf("entry %d of %s is %v", i, key, e)
				}
			}
			n, err := tx.XLen(db, []byte(key))
			if err == nil && n != int64(len(es)) {
				err = fmt.Errorf("XLEN %d but %d entries", n, len(es))
			}
			out = fmt.Sprintf("stream:%d", len(es))
			return err
		}
		return nil
	})
	return out
}

// checkNoOrphanData fails if a data record belongs to no live stream
// version and no pending garbage record covers it.
func (k *ksEnv) checkNoOrphanData() {
	k.t.Helper()
	type span struct{ lo, hi []byte }
	var covered []span
	glo, ghi := storage.GarbageBounds()
	it, err := k.e.db.NewIter(glo, ghi)
	if err != nil {
		k.t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		lo, hi, err := storage.DecodeGarbage(it.Key(), it.Value())
		if err != nil {
			k.t.Fatal(err)
		}
		covered = append(covered, span{lo, hi})
	}
	it.Close()
	it, err = k.e.db.NewIter(storage.AllData())
	if err != nil {
		k.t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		if !storage.IsMetaKey(it.Key()) {
			continue
		}
		db, key, _ := storage.DecodeMetaKey(it.Key())
		m, _ := storage.DecodeMeta(it.Value())
		if m.Type == storage.TypeStream {
			lo, hi := storage.VersionBounds(db, key, m.Version)
			covered = append(covered, span{lo, hi})
		}
	}
	it.Close()
	it, err = k.e.db.NewIter([]byte{0x11}, []byte{0x12})
	if err != nil {
		k.t.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if storage.IsMetaKey(it.Key()) {
			continue
		}
		in := false
		for _, s := range covered {
			if bytes.Compare(it.Key(), s.lo) >= 0 && bytes.Compare(it.Key(), s.hi) < 0 {
				in = true
				break
			}
		}
		if !in {
			k.t.Errorf("orphan data record %x", it.Key())
			return
		}
	}
}

func TestRenameStreamDataMoves(t *testing.T) {
	k := newKS(t)
	k.stream(0, "src", 250)
	m, _ := k.meta(0, "src")
	lo, hi := storage.VersionBounds(0, []byte("src"), m.Version)
	n := k.countRange(lo, hi)
	k.update(func(tx *Tx) error {
		_, err := tx.Rename(0, []byte("src"), []byte("dst"), false)
		return err
	})
	dm, ok := k.meta(0, "dst")
	if !ok || dm.Version == m.Version {
		t.Fatalf("dst meta %+v, %v: want a new version", dm, ok)
	}
	dlo, dhi := storage.VersionBounds(0, []byte("dst"), dm.Version)
	if got := k.countRange(dlo, dhi); got != n {
		t.Fatalf("dst has %d records; src had %d", got, n)
	}
	// The stream keeps working under its new name.
	k.update(func(tx *Tx) error {
		a := XAddArgs{Auto: true, Fields: fv("f", "251")}
		_, _, err := tx.XAdd(0, []byte("dst"), &a)
		return err
	})
	k.view(func(tx *Tx) error {
		if n, err := tx.XLen(0, []byte("dst")); err != nil || n != 251 {
			t.Errorf("XLEN dst = %d, %v", n, err)
		}
		return nil
	})
	// src's records are left to the collector, which a garbage record for
	// src's version tells to drop exactly them.
	glo, ghi := storage.GarbageBounds()
	it, err := k.e.db.NewIter(glo, ghi)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	found := k.countRange(lo, hi) == 0 // already collected
	for ok := it.First(); ok && !found; ok = it.Next() {
		glo, ghi, err := storage.DecodeGarbage(it.Key(), it.Value())
		found = err == nil && bytes.Equal(glo, lo) && bytes.Equal(ghi, hi)
	}
	if !found {
		t.Error("no garbage record for the renamed stream's old records")
	}
	k.checkNoOrphanData()
}

func TestFlush(t *testing.T) {
	k := newKS(t)
	for db := 0; db < 3; db++ {
		k.set(db, "s", "v", 0)
		k.set(db, "t", "v", ksT0+100+int64(db))
		k.stream(db, "x", 5)
	}
	k.takeChanges()
	k.update(func(tx *Tx) error {
		// Written in the same transaction, then flushed with the rest.
		if _, _, _, err := tx.Set(1, []byte("new"), []byte("v"), SetOptions{ExpireAt: ksT0 + 7}); err != nil {
			return err
		}
		return tx.FlushDB(1)
	})
	if got := k.takeChanges(); !slices.Equal(got, []string{"written 1 new", "flushed 1 "}) {
		t.Errorf("FlushDB noted %v", got)
	}
	stats := func(db int) (int64, int64) {
		var keys, exp int64
		k.view(func(tx *Tx) error {
			var err error
			keys, exp, err = tx.KeyspaceStats(db)
			return err
		})
		return keys, exp
	}
	for db, want := range [][2]int64{{3, 1}, {0, 0}, {3, 1}} {
		if keys, exp := stats(db); keys != want[0] || exp != want[1] {
			t.Errorf("db %d: %d keys, %d expires; want %v", db, keys, exp, want)
		}
	}
	lo, hi := storage.DataPrefixDB(1)
	if n := k.countRange(lo, hi); n != 0 {
		t.Errorf("db 1 still has %d data records", n)
	}
	k.checkIndex()
	if k.describe(2, "x") != "stream:5" || k.describe(0, "x") != "stream:5" {
		t.Error("FLUSHDB 1 touched another database's stream")
	}

	k.update(func(tx *Tx) error { return tx.FlushAll() })
	if got := k.takeChanges(); !slices.Equal(got, []string{"flushed all"}) {
		t.Errorf("FlushAll noted %v", got)
	}
	for db := 0; db < 3; db++ {
		if keys, exp := stats(db); keys != 0 || exp != 0 {
			t.Errorf("db %d after FLUSHALL: %d keys, %d expires", db, keys, exp)
		}
	}
	lo, hi = storage.AllKeyspace()
	if n := k.countRange(lo, hi); n != 0 {
		t.Errorf("%d records left after FLUSHALL", n)
	}
	// The engine keeps working: versions are not reused.
	k.stream(0, "x", 2)
	if got := k.describe(0, "x"); got != "stream:2" {
		t.Errorf("recreated stream: %s", got)
	}
}

func TestDBSizeAndKeys(t *testing.T) {
	k := newKS(t)
	// The Redis glob cases: KEYS <pattern> on a database holding these
	// keys, as redis-server 7.0.15 answers.
	keys := []string{"hello", "hallo", "hxllo", "hllo", "heeeello", "a*b", "a\\b", "ab", "a]", "a-", "a^", "", "x", "abc", "a[b", "\xe9t", "\x7ft", "Bt"}
	for _, key := range keys {
		k.set(0, key, "1", 0)
	}
	k.set(0, "expired", "1", ksT0)
	k.set(1, "hello", "1", 0)
	cases := []struct {
		pat  string
		want []string
	}{
		{"h?llo", []string{"hello", "hallo", "hxllo"}},
		{"h*llo", []string{"hello", "hallo", "hxllo", "hllo", "heeeello"}},
		{"h[ae]llo", []string{"hello", "hallo"}},
		{"h[^e]llo", []string{"hallo", "hxllo"}},
		{"h[a-b]llo", []string{"hallo"}},
		{"h[b-a]llo", []string{"hallo"}},
		{"a\x5c*b", []string{"a*b"}},
		{"a\x5c\x5cb", []string{"a\x5cb"}},
		{"a[\x5c]]", []string{"a]"}},
		{"a[]]", []string{}},
		{"a[-]", []string{"a-"}},
		{"a[^]", []string{"ab", "a]", "a-", "a^"}},
		{"a[b", []string{"ab"}},
		{"a[", []string{}},
		{"a[bc", []string{"ab"}},
		{"*", []string{"hello", "hallo", "hxllo", "hllo", "heeeello", "a*b", "a\x5cb", "ab", "a]", "a-", "a^", "", "x", "abc", "a[b", "\xe9t", "\x7ft", "Bt"}},
		{"", []string{""}},
		{"a*", []string{"a*b", "a\x5cb", "ab", "a]", "a-", "a^", "abc", "a[b"}},
		{"*b", []string{"a*b", "a\x5cb", "ab", "a[b"}},
		{"a?", []string{"ab", "a]", "a-", "a^"}},
		{"??", []string{"ab", "a]", "a-", "a^", "\xe9t", "\x7ft", "Bt"}},
		{"?", []string{"x"}},
		{"[\x80-\xff]t", []string{"\xe9t"}},
		{"[\x00-\x7f]t", []string{"\x7ft", "Bt"}},
		{"[A-\xe9]t", []string{"\xe9t"}}, // signed chars: 0xe9 < 'A'
		{"a\x5c", []string{}},
		{"ab\x5c", []string{}},
		{"a[a-]", []string{"a]", "a^"}},
		{"a[\x5c^]", []string{"a^"}},
		{"a[^a-z]", []string{"a]", "a-", "a^"}},
		{"h*l*o", []string{"hello", "hallo", "hxllo", "hllo", "heeeello"}},
		{"**", []string{"hello", "hallo", "hxllo", "hllo", "heeeello", "a*b", "a\x5cb", "ab", "a]", "a-", "a^", "x", "abc", "a[b", "\xe9t", "\x7ft", "Bt"}},
		{"*[", []string{}},
		{"a[b-]", []string{"ab", "a]", "a^"}},
		{"*?*", []string{"hello", "hallo", "hxllo", "hllo", "heeeello", "a*b", "a\x5cb", "ab", "a]", "a-", "a^", "x", "abc", "a[b", "\xe9t", "\x7ft", "Bt"}},
		{"[a-]*", []string{}},
		{"\x5ca?", []string{"ab", "a]", "a-", "a^"}},
		{"*\x5c", []string{}},
		{"[^]]*", []string{"a]"}},
	}
	for _, c := range cases {
		k.view(func(tx *Tx) error {
			got, err := tx.Keys(0, []byte(c.pat))
			if err != nil {
				return err
			}
			gs := make([]string, len(got))
			for i, g := range got {
				gs[i] = string(g)
			}
			sort.Strings(gs)
			want := slices.Clone(c.want)
			sort.Strings(want)
			if !slices.Equal(gs, want) {
				t.Errorf("KEYS %q = %q; want %q", c.pat, gs, want)
			}
			return nil
		})
	}
	k.view(func(tx *Tx) error {
		// "expired" counts until it is reclaimed, as in Redis.
		if n, err := tx.DBSize(0); err != nil || n != int64(len(keys))+1 {
			t.Errorf("DBSIZE 0 = %d, %v; want %d", n, err, len(keys)+1)
		}
		if n, err := tx.DBSize(5); err != nil || n != 0 {
			t.Errorf("DBSIZE 5 = %d, %v", n, err)
		}
		return nil
	})
}

func TestGlobExponential(t *testing.T) {
	// Without the give-up rule this takes exponential time.
	s := bytes.Repeat([]byte("a"), 60)
	if globMatch([]byte("*a*a*a*a*a*a*a*a*a*a*a*a*b"), s) {
		t.Fatal("matched")
	}
}

func TestObjectEncoding(t *testing.T) {
	k := newKS(t)
	cases := []struct{ val, want string }{
		{"123", "int"}, {"-5", "int"}, {"0", "int"}, {"9223372036854775807", "int"}, {"-9223372036854775808", "int"},
		{"12345678901234567890", "embstr"}, {"01", "embstr"}, {"+1", "embstr"}, {"-0", "embstr"}, {" 1", "embstr"},
		{"abc", "embstr"}, {"", "embstr"},
		{string(bytes.Repeat([]byte("x"), 44)), "embstr"}, {string(bytes.Repeat([]byte("x"), 45)), "raw"},
	}
	for i, c := range cases {
		key := fmt.Sprint("k", i)
		k.set(0, key, c.val, 0)
		k.view(func(tx *Tx) error {
			enc, ok, err := tx.ObjectEncoding(0, []byte(key))
			if err != nil || !ok || enc != c.want {
				t.Errorf("OBJECT ENCODING of %q = %q, %v, %v; want %q", c.val, enc, ok, err, c.want)
			}
			return nil
		})
	}
	k.stream(0, "x", 1)
	k.view(func(tx *Tx) error {
		if enc, ok, err := tx.ObjectEncoding(0, []byte("x")); enc != "stream" || !ok || err != nil {
			t.Errorf("stream: %q, %v, %v", enc, ok, err)
		}
		if _, ok, err := tx.ObjectEncoding(0, []byte("nope")); ok || err != nil {
			t.Errorf("missing: %v, %v", ok, err)
		}
		return nil
	})
}
