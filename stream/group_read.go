package stream

import (
	"github.com/eddy-streams/eddy/storage"
)

// XReadGroup reads one key of XREADGROUP for consumer a.Consumer of
// a.Group, creating the consumer when new and refreshing its seen-time
// when the key is served (history always is; ">" only with new entries),
// as Redis 7.0 does.
//
// With newOnly (">"), it delivers entries after the group's
// last-delivered-id, advancing it and entries-read, and adds them to the
// PEL unless a.NoAck (an entry already pending, for another consumer
// after XGROUP SETID moved the group back, moves to this one with a
// delivery count of 1). Otherwise it returns the consumer's own pending
// entries with ID > after, setting their delivery time to now and
// counting one more delivery; entries deleted from the stream come back
// with nil Fields and are left as they are. As in Redis, after == MaxID
// means ">" (Redis parses ">" to that ID).
//
// Missing key or group: ErrNoSuchKey, ErrNoGroup (Redis replies "NOGROUP
// No such key 'k' or consumer group 'g' in XREADGROUP with GROUP option"
// to both). XREADGROUP does not modify the key for WATCH, so nothing is
// noted.
func (tx *Tx) XReadGroup(db int, key []byte, a ReadGroupArgs, after ID, newOnly bool) (ReadGroupResult, error) {
	if tx.b == nil {
		return ReadGroupResult{}, ErrReadOnlyTx
	}
	g, err := tx.loadGroup(db, key, a.Group)
	if err != nil {
		return ReadGroupResult{}, err
	}
	// [server engineer, XREADGROUP] Redis 7.0.15 creates the consumer (or
	// refreshes its seen-time) only for a key it serves: ">" with nothing
	// new leaves the group untouched (checked against redis-server; found
	// by tests/TestDiffRandomGroups). readNew looks the consumer up itself.
	var res ReadGroupResult
	if newOnly || after == MaxID {
		res, err = tx.readNew(g, a)
	} else {
		var c *consumerState
		if c, err = g.seen(a.Consumer); err != nil {
			return ReadGroupResult{}, err
		}
		res, err = tx.readHistory(g, c, after, a.Count)
	}
	if err != nil {
		return ReadGroupResult{}, err
	}
	return res, g.flush()
}

// readNew serves ">": the entries after the group's last-delivered-id.
func (tx *Tx) readNew(g *groupOp, a ReadGroupArgs) (ReadGroupResult, error) {
	s := g.s
	if a.Woken && !g.rec.LastID.Less(s.sm.Last) {
		return ReadGroupResult{}, nil
	}
	// Without Woken, the key is served when a live entry lies after the
	// last-delivered-id: exactly when the scan below finds one, so the
	// scan answers that too (no separate look at the last entry).
	var entries []Entry
	if start, ok := g.rec.LastID.Next(); ok && s.sm.Length > 0 {
		count := a.Count
		if count <= 0 {
			count = -1
		}
		var err error
		if entries, err = tx.scanEntries(s, start, MaxID, count, false); err != nil {
			return ReadGroupResult{}, err
		}
	}
	if len(entries) == 0 && !a.Woken {
		return ReadGroupResult{}, nil
	}
	c, err := g.seen(a.Consumer)
	if err != nil {
		return ReadGroupResult{}, err
	}
	var pending []pendingEntry
	if !a.NoAck && len(entries) > 0 {
		if pending, err = g.pendingIn(entries[0].ID, entries[len(entries)-1].ID); err != nil {
			return ReadGroupResult{}, err
		}
	}
	for _, e := range entries {
		g.advance(e.ID)
		if a.NoAck {
			continue
		}
		for len(pending) > 0 && pending[0].id.Less(e.ID) {
			pending = pending[1:] // pending, but its entry is gone from the stream
		}
		if len(pending) == 0 || pending[0].id != e.ID {
			n := nack{DeliveryTime: tx.now, Deliveries: 1}
			if err := g.addNack(e.ID, c, &n); err != nil {
				return ReadGroupResult{}, err
			}
			continue
		}
		n := pending[0].n
		pending = pending[1:]
		n.DeliveryTime, n.Deliveries = tx.now, 1
		if err := g.moveNack(e.ID, &n, c); err != nil {
			return ReadGroupResult{}, err
		}
	}
	if entries == nil {
		entries = []Entry{}
	}
	return ReadGroupResult{Served: true, Entries: entries}, nil
}

// advance moves the group's last-delivered-id to id, a newly delivered
// entry, keeping entries-read as Redis's streamReplyWithRange does: one
// more when the counter is valid and no tombstone lies at or after id,
// else an estimate from the stream's counters (possibly unknown).
func (g *groupOp) advance(id ID) {
	sm := &g.s.sm
	if g.rec.EntriesRead != EntriesReadUnknown && !rangeHasTombstones(sm, id) {
		g.rec.EntriesRead++
	} else if sm.EntriesAdded != 0 {
		g.rec.EntriesRead = estimateEntriesRead(sm, id)
	}
	g.rec.LastID = id
	g.dirty = true
}

// readHistory serves an explicit ID: the consumer's own pending entries
// after `after`, through the per-owner index.
func (tx *Tx) readHistory(g *groupOp, c *consumerState, after ID, count int64) (ReadGroupResult, error) {
	res := ReadGroupResult{Served: true, Entries: []Entry{}}
	start, _ := after.Next() // after != MaxID here
	s := g.s
	lower, upper := storage.PELConsumerBounds(s.db, s.key, s.meta.Version, g.name, c.name)
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return res, err
	}
	defer it.Close()
	for ok := it.SeekGE(g.ownerKey(c.name, start)); ok && (count <= 0 || int64(len(res.Entries)) < count); ok = it.Next() {
		ms, seq, err := storage.DecodeIDSuffix(it.Key())
		if err != nil {
			return res, err
		}
		id := ID{ms, seq}
		e, exists, err := tx.getEntry(s, id)
		if err != nil {
			return res, err
		}
		if !exists {
			res.Entries = append(res.Entries, Entry{ID: id})
			continue
		}
		n, pending, err := g.getNack(id)
		if err != nil {
			return res, err
		}
		if !pending {
			return res, storage.ErrCorrupt
		}
		n.DeliveryTime = tx.now
		n.Deliveries++
		if err := g.putNack(id, &n); err != nil {
			return res, err
		}
		res.Entries = append(res.Entries, e)
	}
	return res, nil
}

// XAck removes ids from the group's PEL and returns how many were
// pending (an ID given twice counts once). A missing key or group
// acknowledges nothing (0, nil), as in Redis. Nothing is noted: XACK
// does not modify the key for WATCH.
func (tx *Tx) XAck(db int, key, group []byte, ids []ID) (int64, error) {
	if tx.b == nil {
		return 0, ErrReadOnlyTx
	}
	g, err := tx.loadGroup(db, key, group)
	if err == ErrNoSuchKey || err == ErrNoGroup {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	pending, err := g.pendingOf(ids)
	if err != nil {
		return 0, err
	}
	for i := range pending {
		if err := g.removeNack(pending[i].id, &pending[i].n); err != nil {
			return 0, err
		}
	}
	return int64(len(pending)), g.flush()
}

// rangeHasTombstones reports whether a deleted entry may lie at or after
// start (Redis's streamRangeHasTombstones with no end).
func rangeHasTombstones(sm *streamMeta, start ID) bool {
	if sm.Length == 0 || sm.MaxDeleted.IsZero() {
		return false
	}
	if sm.MaxDeleted.Less(sm.First) {
		return false // the latest tombstone is before the first entry
	}
	return !sm.MaxDeleted.Less(start)
}

// estimateEntriesRead is Redis 7.0's streamEstimateDistanceFromFirstEverEntry:
// the entries-read counter a group whose last-delivered-id is id would
// have, or EntriesReadUnknown when it cannot be told.
func estimateEntriesRead(sm *streamMeta, id ID) int64 {
	if sm.EntriesAdded == 0 {
		return 0
	}
	if sm.Length == 0 && !sm.Last.Less(id) {
		return int64(sm.EntriesAdded)
	}
	switch id.Compare(sm.Last) {
	case 0:
		return int64(sm.EntriesAdded)
	case 1:
		return EntriesReadUnknown
	}
	if sm.MaxDeleted.IsZero() || sm.MaxDeleted.Less(sm.First) {
		switch id.Compare(sm.First) {
		case -1:
			return int64(sm.EntriesAdded - sm.Length)
		case 0:
			return int64(sm.EntriesAdded - sm.Length + 1)
		}
	}
	return EntriesReadUnknown
}

// groupLag is Redis 7.0's streamReplyWithCGLag: ok is false when the lag
// cannot be told (XINFO replies nil).
func groupLag(sm *streamMeta, g *groupRec) (int64, bool) {
	if sm.EntriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != EntriesReadUnknown && !rangeHasTombstones(sm, g.LastID) {
		return int64(sm.EntriesAdded) - g.EntriesRead, true
	}
	read := estimateEntriesRead(sm, g.LastID)
	if read == EntriesReadUnknown {
		return 0, false
	}
	return int64(sm.EntriesAdded) - read, true
}
