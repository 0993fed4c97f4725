package stream

import (
	"github.com/eddy-streams/eddy/storage"
)

// XClaim is XCLAIM for consumer, following Redis 7.0's xclaimCommand:
//
//   - LASTID raises the group's last-delivered-id first (entries-read is
//     left alone);
//   - an ID whose entry is no longer in the stream is dropped from the PEL
//     (if pending) and not returned;
//   - FORCE creates a PEL entry (delivery count 1, then counted as below)
//     for an ID in the stream that is pending nowhere;
//   - an entry delivered less than MinIdle ms ago is skipped (not for a
//     FORCE-created one);
//   - a claimed entry gets the new delivery time (now, or from IDLE/TIME),
//     the RETRYCOUNT, or one more delivery unless JUSTID, and moves to
//     consumer, which is created (or its seen-time refreshed) only when
//     something is claimed.
//
// It returns the claimed entries in the order of a.IDs (Fields nil with
// JustID). Missing key or group: ErrNoGroup. Nothing is noted: XCLAIM
// does not modify the key for WATCH.
func (tx *Tx) XClaim(db int, key, group, consumer []byte, a ClaimArgs) ([]Entry, error) {
	if tx.b == nil {
		return nil, ErrReadOnlyTx
	}
	g, err := tx.loadGroup(db, key, group)
	if err == ErrNoSuchKey {
		err = ErrNoGroup
	}
	if err != nil {
		return nil, err
	}
	now := tx.now
	minIdle := max(a.MinIdle, 0)
	if a.LastID != nil && g.rec.LastID.Less(*a.LastID) {
		g.rec.LastID = *a.LastID
		g.dirty = true
	}
	deliveryTime := now
	switch {
	case a.Idle != nil:
		deliveryTime = now - *a.Idle
	case a.Time != nil:
		deliveryTime = *a.Time
	}
	if deliveryTime < 0 || deliveryTime > now {
		deliveryTime = now
	}
	var c *consumerState
	out := []Entry{}
	for _, id := range a.IDs {
		n, pending, err := g.getNack(id)
		if err != nil {
			return nil, err
		}
		e, exists, err := tx.getEntry(g.s, id)
		if err != nil {
			return nil, err
		}
		if !exists {
			if pending {
				if err := g.removeNack(id, &n); err != nil {
					return nil, err
				}
			}
			continue
		}
		forced := false
		if !pending {
			if !a.Force {
				continue
			}
			n = nack{DeliveryTime: now, Deliveries: 1}
			forced = true
		}
		if !forced && minIdle > 0 && now-n.DeliveryTime < minIdle {
			continue
		}
		if c == nil {
			if c, err = g.seen(consumer); err != nil {
				return nil, err
			}
		}
		n.DeliveryTime = deliveryTime
		switch {
		case a.RetryCount != nil && *a.RetryCount >= 0:
			n.Deliveries = uint64(*a.RetryCount)
		case !a.JustID:
			n.Deliveries++
		}
		if forced {
			err = g.addNack(id, c, &n)
		} else {
			err = g.moveNack(id, &n, c)
		}
		if err != nil {
			return nil, err
		}
		if a.JustID {
			e.Fields = nil
		}
		out = append(out, e)
	}
	return out, g.flush()
}

// autoClaimAttempts is Redis's attempts_factor: XAUTOCLAIM examines at
// most Count times this many PEL entries per call.
const autoClaimAttempts = 10

// XAutoClaim is XAUTOCLAIM for consumer, following Redis 7.0's
// xautoclaimCommand: it walks the group's PEL from a.Start, examining at
// most 10*Count entries; a pending ID whose entry was deleted is dropped
// from the PEL and reported in Deleted (and counts toward Count); one
// idle at least MinIdle ms is claimed: delivery time now, one more
// delivery unless JustID, moved to consumer (created, or its seen-time
// refreshed, only when something is claimed). Cost: O(examined · log PEL),
// never O(PEL). Missing key or group: ErrNoGroup. Nothing is noted.
func (tx *Tx) XAutoClaim(db int, key, group, consumer []byte, a AutoClaimArgs) (AutoClaimResult, error) {
	res := AutoClaimResult{Claimed: []Entry{}, Deleted: []ID{}}
	if tx.b == nil {
		return res, ErrReadOnlyTx
	}
	g, err := tx.loadGroup(db, key, group)
	if err == ErrNoSuchKey {
		err = ErrNoGroup
	}
	if err != nil {
		return res, err
	}
	now := tx.now
	minIdle := max(a.MinIdle, 0)
	count := max(a.Count, 1)
	attempts := count * autoClaimAttempts
	s := g.s
	lower, upper := storage.PELBounds(s.db, s.key, s.meta.Version, g.name)
	// The iterator sees the batch as it was when created: the PEL records
	// this loop rewrites or deletes are all behind it.
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return res, err
	}
	defer it.Close()
	var c *consumerState
	ok := it.SeekGE(g.pelKey(laterID(a.Start, g.pel.lo)))
	if ok && !g.pel.lo.Less(a.Start) {
		// Sought from the PEL's lower bound: the first entry is the
		// smallest pending ID, a tighter bound past XACK's tombstones.
		ms, seq, err := storage.DecodeIDSuffix(it.Key())
		if err != nil {
			return res, err
		}
		if first := (ID{ms, seq}); g.pel.lo != first {
			g.pel.lo, g.pelLearned = first, true
		}
	}
	for ; ok && attempts > 0 && count > 0; ok = it.Next() {
		attempts--
		ms, seq, err := storage.DecodeIDSuffix(it.Key())
		if err != nil {
			return res, err
		}
		id := ID{ms, seq}
		n, err := decodeNack(it.Value())
		if err != nil {
			return res, err
		}
		e, exists, err := tx.getEntry(s, id)
		if err != nil {
			return res, err
		}
		if !exists {
			if err := g.removeNack(id, &n); err != nil {
				return res, err
			}
			res.Deleted = append(res.Deleted, id)
			count--
			continue
		}
		if minIdle > 0 && now-n.DeliveryTime < minIdle {
			continue
		}
		if c == nil {
			if c, err = g.seen(consumer); err != nil {
				return res, err
			}
		}
		n.DeliveryTime = now
		if !a.JustID {
			n.Deliveries++
		}
		if err := g.moveNack(id, &n, c); err != nil {
			return res, err
		}
		if a.JustID {
			e.Fields = nil
		}
		res.Claimed = append(res.Claimed, e)
		count--
	}
	// ok: the iterator stands on the first entry not examined, the cursor.
	if ok {
		ms, seq, err := storage.DecodeIDSuffix(it.Key())
		if err != nil {
			return res, err
		}
		res.Next = ID{ms, seq}
	}
	return res, g.flush()
}
