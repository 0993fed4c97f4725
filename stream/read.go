package stream

import (
	"errors"

	"github.com/eddy-streams/eddy/storage"
)

// XLen returns the number of entries (0 for a missing key).
func (tx *Tx) XLen(db int, key []byte) (int64, error) {
	km, ok, err := tx.lookupMeta(db, key)
	switch {
	case err != nil || !ok:
		return 0, err
	case km.meta.Type != storage.TypeStream:
		return 0, ErrWrongType
	}
	return int64(km.sm.Length), nil
}

// LastID returns the stream's last generated ID, for XREAD's "$"; ok is
// false for a missing key.
func (tx *Tx) LastID(db int, key []byte) (ID, bool, error) {
	km, ok, err := tx.lookupMeta(db, key)
	switch {
	case err != nil || !ok:
		return ID{}, false, err
	case km.meta.Type != storage.TypeStream:
		return ID{}, false, ErrWrongType
	}
	return km.sm.Last, true, nil
}

// XRange returns entries with start <= ID <= end, at most count (count < 0:
// all), in reverse order when rev (start is still the smaller bound).
func (tx *Tx) XRange(db int, key []byte, start, end ID, count int64, rev bool) ([]Entry, error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok || count == 0 || end.Less(start) || s.sm.Length == 0 {
		return nil, err
	}
	return tx.scanEntries(s, start, end, count, rev)
}

// XRead returns up to count (count <= 0: all) entries with ID > after. A
// missing key gives no entries.
func (tx *Tx) XRead(db int, key []byte, after ID, count int64) ([]Entry, error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok || s.sm.Length == 0 {
		return nil, err
	}
	start, more := after.Next()
	if !more || s.sm.Last.Less(start) {
		return nil, nil
	}
	if count <= 0 {
		count = -1
	}
	return tx.scanEntries(s, start, MaxID, count, false)
}

// scanEntries reads entries in [lo, hi], forward or backward, at most
// count of them (count < 0: all). The entries are copied out of the
// iterator into two shared backing arrays (bytes, and field slices) rather
// than one allocation per entry; the caller owns them.
func (tx *Tx) scanEntries(s *streamRef, lo, hi ID, count int64, rev bool) ([]Entry, error) {
	var out []Entry
	if count > 0 && count <= scanPrealloc {
		out = make([]Entry, 0, count)
	}
	var d entryDecoder
	if count > 0 {
		d.want = int(min(count, scanPrealloc))
	}
	_, err := tx.eachEntry(s, lo, hi, count, rev, func(sets *fieldSets, id ID, v []byte) error {
		d.sets = sets
		e, err := d.decode(id, v)
		if err == nil {
			out = append(out, e)
		}
		return err
	})
	return out, err
}

// XRangeEach calls fn with each entry XRange would return, in order, and
// returns how many there were. The entry's ID and fields alias the
// iterator's memory and the transaction's scratch space: they are valid
// only during the call. A reply written from inside fn thus costs no copy
// of the entries and no allocation (XRANGE's garbage was most of what the
// collector had to do under an XRANGE load).
func (tx *Tx) XRangeEach(db int, key []byte, start, end ID, count int64, rev bool, fn func(Entry) error) (int, error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil || !ok || count == 0 || end.Less(start) || s.sm.Length == 0 {
		return 0, err
	}
	return tx.eachEntry(s, start, end, count, rev, func(sets *fieldSets, id ID, v []byte) error {
		clear(tx.scan)
		var err error
		if _, tx.scan, err = storage.DecodeEntryValue(v, sets, tx.scan[:0]); err != nil {
			return err
		}
		return fn(Entry{ID: id, Fields: tx.scan})
	})
}

// eachEntry calls fn with the ID and value of each entry in [lo, hi],
// forward or backward, at most count of them (count < 0: all), and
// returns how many it called fn with. The value is valid only during the
// call.
//
// A scan of a few entries first reads a window at its start (scanWindow)
// and only then, if the window held too few, the rest of the range. The
// window is for the LSM: an iterator seeks every level holding part of its
// bounds, and the oldest entries of a long stream sit in the bottom level
// under the newer ones, the newest in the memtable over the older ones, so
// bounds as tight as the entries wanted spare opening tables of the other
// levels. Either way the entries are the same, in the same order.
//
// In a packed stream (records.go) the record holding lo may be keyed
// before it: the scan's bounds reach back to the stream's first key (to
// its tail node's first, for a scan from there), and a forward scan
// starts at the last record keyed at or before lo. The
// window still bounds the records visited first; as records never
// overlap, visiting the rest after it keeps the entries in order.
func (tx *Tx) eachEntry(s *streamRef, lo, hi ID, count int64, rev bool, fn func(sets *fieldSets, id ID, v []byte) error) (int, error) {
	// The bounds live in the transaction: no other scan runs inside this
	// one, and the iterator is closed before eachEntry returns.
	tx.lo = s.appendEntryKey(tx.lo[:0], lo)
	tx.hi = append(s.appendEntryKey(tx.hi[:0], hi), 0)
	sets, err := tx.fieldSets(s)
	if err != nil {
		return 0, err
	}
	packed := s.sm.Packed != 0
	first := tx.lo
	if packed {
		// A record never spans nodes: one holding lo is keyed at or
		// after the master of lo's node, which, for a scan from the tail
		// node on (XREAD, XREADGROUP >), is known.
		from := ID{}
		if s.sm.Nodes > 0 && !lo.Less(s.sm.Tail) {
			from = s.sm.Tail
		}
		tx.start = s.appendEntryKey(tx.start[:0], from)
		first = tx.start
	}
	lower, upper := first, tx.hi
	edge, window := scanWindow(&s.sm, lo, hi, count, rev)
	if window {
		tx.mid = s.appendEntryKey(tx.mid[:0], edge)
		if rev {
			lower = tx.mid
		} else {
			upper = tx.mid
		}
	}
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return 0, err
	}
	n := 0
	seekLo := packed && !rev // the first pass of a packed stream's forward scan
	for {
		var ok bool
		switch {
		case rev:
			ok = it.Last()
		case seekLo:
			// The last record keyed at or before lo, if any.
			if ok = it.SeekLT(append(tx.lo, 0)); !ok {
				ok = it.First()
			}
		default:
			ok = it.First()
		}
		for ; ok && int64(n) != count; ok = step(it, rev) {
			k, v := it.Key(), it.Value()
			if !storage.IsEntryRecord(v) {
				ms, seq, err := storage.DecodeIDSuffix(k)
				if err != nil {
					it.Close()
					return n, err
				}
				id := ID{ms, seq}
				if id.Less(lo) {
					// A packed stream's bounds reach before lo: forward,
					// the record SeekLT found; backward, the scan's end.
					if rev {
						return n, it.Close()
					}
					continue
				}
				if err := fn(sets, id, v); err != nil {
					it.Close()
					return n, err
				}
				n++
				continue
			}
			done, err := tx.eachInRecord(k, v, lo, hi, count, rev, &n, sets, fn)
			if err != nil || done {
				return n, errors.Join(err, it.Close())
			}
		}
		if !window || int64(n) == count {
			return n, it.Close()
		}
		// The window held too few: the rest of the range, beyond it,
		// through a new iterator. Moving this one's bounds would miss
		// what a write transaction's batch holds beyond the window but
		// has not shown an iterator yet: deferred entry records
		// (txbatch.go) and appends not merged into its index (storage's
		// Batch.SetAppend), which reach an iterator when it is made.
		window, seekLo = false, false
		lower, upper = tx.mid, tx.hi
		if rev {
			lower, upper = first, tx.mid
		}
		if err := it.Close(); err != nil {
			return n, err
		}
		if it, err = tx.r.NewIter(lower, upper); err != nil {
			return n, err
		}
	}
}

// eachInRecord is eachEntry's visit of a record of several entries: it
// calls fn with those in [lo, hi], in the scan's order, while n is below
// count, and returns true when the scan is done (an entry past its end, or
// count reached).
func (tx *Tx) eachInRecord(k, v []byte, lo, hi ID, count int64, rev bool, n *int, sets *fieldSets, fn func(sets *fieldSets, id ID, v []byte) error) (bool, error) {
	es, err := appendRecordEntries(tx.recs[:0], k, v)
	tx.recs = es
	if err != nil {
		return true, err
	}
	for i := range es {
		e := es[i]
		if rev {
			e = es[len(es)-1-i]
		}
		switch {
		case !rev && e.id.Less(lo), rev && hi.Less(e.id):
			continue
		case !rev && hi.Less(e.id), rev && e.id.Less(lo):
			return true, nil
		case int64(*n) == count:
			return true, nil
		}
		if err := fn(sets, e.id, e.v); err != nil {
			return true, err
		}
		*n++
	}
	return int64(*n) == count, nil
}

// scanWindow returns the edge of the window that a scan of count entries
// of [lo, hi] reads first, and false when a window would not pay: an
// unbounded count, a scan of much of the stream, a stream whose entries
// share one millisecond, or a window reaching past the stream's last entry
// (forward) or first (backward), as a read of new entries (XREAD,
// XREADGROUP >) does and would seek twice for nothing. Forward, the window
// is [lo, edge); backward, [edge, hi].
//
// The window spans the milliseconds that four times count entries take on
// average over the stream's life, so it holds count entries unless they are
// sparser at that end than on average; then the scan reads the rest of the
// range too, which costs a second seek and nothing else.
func scanWindow(sm *streamMeta, lo, hi ID, count int64, rev bool) (ID, bool) {
	const spread = 4
	if count <= 0 || uint64(count) > sm.Length/(2*spread) || sm.Last.Ms <= sm.First.Ms {
		return ID{}, false
	}
	// Milliseconds per spread*count entries, rounded up; the divisor is at
	// least 2, so this cannot overflow.
	w := (sm.Last.Ms-sm.First.Ms)/(sm.Length/(spread*uint64(count))) + 1
	if !rev {
		from := max(lo.Ms, sm.First.Ms)
		if from+w < from || from+w > min(hi.Ms, sm.Last.Ms) {
			return ID{}, false
		}
		return ID{from + w, 0}, true
	}
	to := min(hi.Ms, sm.Last.Ms)
	if to < w || to-w+1 <= max(lo.Ms, sm.First.Ms) {
		return ID{}, false
	}
	return ID{to - w + 1, 0}, true
}

// scanPrealloc is the largest COUNT for which scanEntries sizes its
// result up front.
const scanPrealloc = 1024

// decodeSlabMax bounds, in bytes, the arrays an entryDecoder carves from.
const decodeSlabMax = 32 << 10

// entryDecoder copies entries out of iterator memory, carving the bytes
// and the field slices of many entries out of shared arrays. A full array
// is replaced, not grown, so entries already returned keep theirs. The
// first arrays are sized for want entries, or for one when the caller
// does not know how many it will get; each replacement doubles, up to
// decodeSlabMax. So a read of one entry (a woken XREAD, once per blocked
// client) allocates little, and a long scan few times.
type entryDecoder struct {
	sets   *fieldSets
	want   int // entries expected; 0: unknown
	bytes  []byte
	fields [][]byte
}

// slab is the length of the array that replaces a full one of length
// old: twice as long, or want entries of per each when it is the first,
// within limit.
func (d *entryDecoder) slab(old, per, limit int) int {
	if old == 0 {
		return min(max(d.want, 1)*per, limit)
	}
	return min(2*old, limit)
}

func (d *entryDecoder) decode(id ID, v []byte) (Entry, error) {
	if cap(d.bytes)-len(d.bytes) < len(v) {
		d.bytes = make([]byte, 0, max(len(v), d.slab(cap(d.bytes), len(v), decodeSlabMax)))
	}
	n := len(d.bytes)
	d.bytes = append(d.bytes, v...)
	cp := d.bytes[n:len(d.bytes):len(d.bytes)]
	if cap(d.fields)-len(d.fields) < 16 {
		d.fields = make([][]byte, 0, max(16, d.slab(cap(d.fields), 4, decodeSlabMax/24)))
	}
	f := len(d.fields)
	var err error
	if _, d.fields, err = storage.DecodeEntryValue(cp, d.sets, d.fields); err != nil {
		return Entry{}, err
	}
	return Entry{ID: id, Fields: d.fields[f:len(d.fields):len(d.fields)]}, nil
}

func step(it *storage.Iter, rev bool) bool {
	if rev {
		return it.Prev()
	}
	return it.Next()
}

// getEntry reads entry id; ok is false if it is not in the stream.
func (tx *Tx) getEntry(s *streamRef, id ID) (Entry, bool, error) {
	f, ok, err := tx.findEntry(s, id)
	if err != nil || !ok {
		return Entry{}, false, err
	}
	sets, err := tx.fieldSets(s)
	if err != nil {
		return Entry{}, false, err
	}
	d := entryDecoder{sets: sets}
	e, err := d.decode(id, f.v)
	return e, err == nil, err
}

// edgeEntry returns the first (or last) live entry, ok false if empty.
func (tx *Tx) edgeEntry(s *streamRef, last bool) (Entry, bool, error) {
	es, err := tx.scanEntries(s, ID{}, MaxID, 1, last)
	if err != nil || len(es) == 0 {
		return Entry{}, false, err
	}
	return es[0], true, nil
}
