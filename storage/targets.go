package storage

import (
	"bytes"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// Append targets
//
// A stream that takes many appends writes, in every memtable, entries
// past the end of its entries and a few records that sort after them: its
// tail node, seq index records, metadata record and, under consumer
// groups, PEL records. Left alone, a flush writes all of them as one table
// from the first new entry to the metadata record. That table overlaps the
// one below holding the stream's newest old entries together with its
// nodes and indexes, so every compaction of a flush rewrites that table
// with the new entries merged in, and the next flush overlaps the result
// again: each entry is rewritten several times on its way down.
//
// The span policy ends a table where an append target's entries end and
// where they begin. A flush of appends then makes a table of new entries
// that overlaps nothing below it, which compactions move down the levels
// or merge only with other new entries, and a small table of the other
// records, which is rewritten as before. Only streams that take many
// appends are targets: every boundary is a table boundary, and splitting
// at every key would make tables of a few records each.
//
// The entries of a target are compressed as the bottom level is (zstd)
// from the first compaction on, since tables moved down keep the
// compression they were written with; the records after them are
// rewritten often and take the fastest algorithm at every level.
//
// Against the same build without the policy, compactions wrote and read
// about half as much, XADD -P 16 took less server CPU, and a large load
// and its compaction were faster; the cost is a little disk, as tables
// moved to the bottom keep their sequence numbers where a rewrite zeroes
// them. Reads under writes and consumer groups did not move
// (bench/results/HISTORY.md, "Pebble settings" and "Figures that stood in
// code comments").

// maxAppendTargets bounds the streams the span policy splits around; the
// least recently marked is dropped first.
const maxAppendTargets = 256

// appendTargets is the set of streams marked by MarkAppendTarget.
type appendTargets struct {
	mu    sync.Mutex
	clock uint64
	marks map[string]*uint64 // version prefix -> clock at its last mark

	spans atomic.Pointer[[]targetSpan] // sorted by lo; never modified once stored
}

// targetSpan is the key range of one version of a target stream: its
// entries are [lo, mid), its other records [mid, hi).
type targetSpan struct {
	lo, mid, hi []byte
}

// mark records the stream version with prefix p (AppendVersionPrefix) as
// a target, or refreshes it.
func (t *appendTargets) mark(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clock++
	// A refresh, the common case, looks the prefix up without copying it.
	if c, ok := t.marks[string(p)]; ok {
		*c = t.clock
		return
	}
	if t.marks == nil {
		t.marks = make(map[string]*uint64)
	}
	c := t.clock
	t.marks[string(p)] = &c
	if len(t.marks) > maxAppendTargets {
		oldest, at := "", t.clock
		for k, c := range t.marks {
			if *c < at {
				oldest, at = k, *c
			}
		}
		delete(t.marks, oldest)
	}
	spans := make([]targetSpan, 0, len(t.marks))
	for k := range t.marks {
		lo, mid := kindBoundsOf([]byte(k), KindEntry)
		spans = append(spans, targetSpan{lo: lo, mid: mid, hi: prefixEnd([]byte(k))})
	}
	sort.Slice(spans, func(i, j int) bool { return bytes.Compare(spans[i].lo, spans[j].lo) < 0 })
	t.spans.Store(&spans)
}

// spanPolicy is the store's pebble.SpanPolicyFunc: it returns the policy
// for the keys from start on and the key where the next table must begin.
func (t *appendTargets) spanPolicy(start []byte) (pebble.SpanPolicy, []byte, error) {
	p := t.spans.Load()
	if p == nil {
		return pebble.SpanPolicy{}, nil, nil
	}
	spans := *p
	i := sort.Search(len(spans), func(i int) bool { return bytes.Compare(spans[i].hi, start) > 0 })
	if i == len(spans) {
		return pebble.SpanPolicy{}, nil, nil
	}
	s := spans[i]
	switch {
	case bytes.Compare(start, s.lo) < 0:
		return pebble.SpanPolicy{}, s.lo, nil
	case bytes.Compare(start, s.mid) < 0:
		return pebble.SpanPolicy{}, s.mid, nil
	}
	return pebble.SpanPolicy{PreferFastCompression: true}, s.hi, nil
}

// MarkAppendTarget tells the store that version of stream key in database
// dbi takes many appends, so that tables end where its entries do (see
// Append targets). The stream engine calls it every few thousand appends
// to a stream, when it loads a long stream's metadata and, on a replica,
// when a primary's batch writes a long stream's metadata; marking a
// stream that has since been deleted only costs a table boundary.
func (db *DB) MarkAppendTarget(dbi int, key []byte, version uint64) {
	db.targets.mark(AppendVersionPrefix(nil, dbi, key, version))
}

// IsAppendTarget reports whether the version of stream key in database dbi
// is among the append targets.
func (db *DB) IsAppendTarget(dbi int, key []byte, version uint64) bool {
	db.targets.mu.Lock()
	defer db.targets.mu.Unlock()
	_, ok := db.targets.marks[string(AppendVersionPrefix(nil, dbi, key, version))]
	return ok
}
