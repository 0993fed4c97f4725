package stream

import (
	"github.com/eddy-streams/eddy/storage"
)

// XPendingSummary is XPENDING key group. It costs O(consumers + log PEL):
// the count comes from the group record, the first and last IDs from the
// two ends of the PEL, the per-consumer counts from consumer records.
// Missing key or group: ErrNoGroup.
func (tx *Tx) XPendingSummary(db int, key, group []byte) (PendingSummary, error) {
	var out PendingSummary
	g, err := tx.loadGroup(db, key, group)
	if err == ErrNoSuchKey {
		err = ErrNoGroup
	}
	if err != nil {
		return out, err
	}
	out.Count = int64(g.rec.Pending)
	if out.Count == 0 {
		return out, nil
	}
	s := g.s
	lower, upper := storage.PELBounds(s.db, s.key, s.meta.Version, g.name)
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return out, err
	}
	edge := func(ok bool, dst *ID) error {
		if !ok {
			return storage.ErrCorrupt
		}
		ms, seq, err := storage.DecodeIDSuffix(it.Key())
		*dst = ID{ms, seq}
		return err
	}
	// The PEL bounds skip the tombstones XACK leaves at either end, and
	// are made tight for the next call.
	err = edge(it.SeekGE(g.pelKey(g.pel.lo)), &out.First)
	if err == nil {
		if g.pel.hi == MaxID {
			err = edge(it.Last(), &out.Last)
		} else {
			err = edge(it.SeekLT(append(g.pelKey(g.pel.hi), 0)), &out.Last)
		}
	}
	if err == nil && g.pel != (pelBounds{out.First, out.Last}) {
		g.pel = pelBounds{out.First, out.Last}
		tx.learnPEL(g)
	}
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return out, err
	}
	cs, err := g.consumerList()
	if err != nil {
		return out, err
	}
	for _, c := range cs {
		if c.rec.Pending > 0 {
			out.Consumers = append(out.Consumers, ConsumerPending{Name: c.name, Pending: int64(c.rec.Pending)})
		}
	}
	return out, nil
}

// XPendingRange is extended XPENDING: pending entries with Start <= ID
// <= End, at most Count, of one consumer (through the per-owner index)
// or of the group. Missing key or group: ErrNoGroup.
func (tx *Tx) XPendingRange(db int, key, group []byte, a PendingRangeArgs) ([]PendingEntry, error) {
	g, err := tx.loadGroup(db, key, group)
	if err == ErrNoSuchKey {
		err = ErrNoGroup
	}
	if err != nil {
		return nil, err
	}
	out := []PendingEntry{}
	if a.Count <= 0 || a.End.Less(a.Start) {
		return out, nil
	}
	if a.HasConsumer {
		c, err := g.consumer(a.Consumer, false)
		if err != nil || c == nil {
			return out, err
		}
	}
	err = tx.walkPEL(g, a.Consumer, a.HasConsumer, a.Start, a.End, func(id ID, n *nack) bool {
		idle := max(tx.now-n.DeliveryTime, 0)
		if a.MinIdle > 0 && tx.now-n.DeliveryTime < a.MinIdle {
			return true
		}
		out = append(out, PendingEntry{ID: id, Consumer: n.Owner, DeliveryTime: n.DeliveryTime,
			Idle: idle, Deliveries: n.Deliveries})
		return int64(len(out)) < a.Count
	})
	return out, err
}

// walkPEL calls fn for the pending entries with start <= ID <= end in ID
// order, of one consumer when byOwner, until fn returns false.
func (tx *Tx) walkPEL(g *groupOp, owner []byte, byOwner bool, start, end ID, fn func(ID, *nack) bool) error {
	s := g.s
	var lower, upper []byte
	if byOwner {
		lower, upper = storage.PELConsumerBounds(s.db, s.key, s.meta.Version, g.name, owner)
	} else {
		lower, upper = storage.PELBounds(s.db, s.key, s.meta.Version, g.name)
	}
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return err
	}
	defer it.Close()
	var seek []byte
	if byOwner {
		seek = g.ownerKey(owner, start)
	} else {
		seek = g.pelKey(laterID(start, g.pel.lo))
	}
	for ok := it.SeekGE(seek); ok; ok = it.Next() {
		ms, seq, err := storage.DecodeIDSuffix(it.Key())
		if err != nil {
			return err
		}
		id := ID{ms, seq}
		if end.Less(id) {
			return nil
		}
		var n nack
		if byOwner {
			var pending bool
			if n, pending, err = g.getNack(id); err != nil {
				return err
			}
			if !pending {
				return storage.ErrCorrupt
			}
		} else if n, err = decodeNack(it.Value()); err != nil {
			return err
		}
		if !fn(id, &n) {
			return nil
		}
	}
	return nil
}

// XInfoGroups lists the stream's groups in byte order of name. A missing
// key is ErrNoSuchKey.
func (tx *Tx) XInfoGroups(db int, key []byte) ([]GroupInfo, error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoSuchKey
	}
	names, recs, err := tx.groupNames(s)
	if err != nil {
		return nil, err
	}
	out := make([]GroupInfo, len(names))
	for i := range names {
		out[i] = groupInfo(&s.sm, names[i], &recs[i])
	}
	return out, nil
}

func groupInfo(sm *streamMeta, name []byte, g *groupRec) GroupInfo {
	in := GroupInfo{
		Name:          name,
		Consumers:     int64(g.Consumers),
		Pending:       int64(g.Pending),
		LastDelivered: g.LastID,
	}
	if g.EntriesRead != EntriesReadUnknown {
		v := g.EntriesRead
		in.EntriesRead = &v
	}
	if lag, ok := groupLag(sm, g); ok {
		in.Lag = &lag
	}
	return in
}

// XInfoConsumers lists the group's consumers in byte order of name.
// ErrNoSuchKey, ErrNoGroup.
func (tx *Tx) XInfoConsumers(db int, key, group []byte) ([]ConsumerInfo, error) {
	g, err := tx.loadGroup(db, key, group)
	if err != nil {
		return nil, err
	}
	cs, err := g.consumerList()
	if err != nil {
		return nil, err
	}
	out := make([]ConsumerInfo, len(cs))
	for i, c := range cs {
		out[i] = ConsumerInfo{Name: c.name, Pending: int64(c.rec.Pending),
			Idle: max(tx.now-c.rec.SeenTime, 0), SeenTime: c.rec.SeenTime}
	}
	return out, nil
}

// groupsFull is the "groups" part of XINFO STREAM FULL: every group with
// its first count PEL entries and its consumers with theirs (count <= 0:
// all).
func (tx *Tx) groupsFull(s *streamRef, count int64) ([]GroupFull, error) {
	names, recs, err := tx.groupNames(s)
	if err != nil {
		return nil, err
	}
	out := make([]GroupFull, 0, len(names))
	for i, name := range names {
		g := &groupOp{tx: tx, s: s, name: name, rec: recs[i], pel: pelAny, consumers: map[string]*consumerState{}}
		gf := GroupFull{GroupInfo: groupInfo(&s.sm, name, &recs[i]), PEL: []PendingEntry{}}
		collect := func(dst *[]PendingEntry, withOwner bool) func(ID, *nack) bool {
			return func(id ID, n *nack) bool {
				pe := PendingEntry{ID: id, DeliveryTime: n.DeliveryTime, Deliveries: n.Deliveries}
				if withOwner {
					pe.Consumer = n.Owner
				}
				*dst = append(*dst, pe)
				return count <= 0 || int64(len(*dst)) < count
			}
		}
		if err := tx.walkPEL(g, nil, false, ID{}, MaxID, collect(&gf.PEL, true)); err != nil {
			return nil, err
		}
		cs, err := g.consumerList()
		if err != nil {
			return nil, err
		}
		gf.Consumers = make([]ConsumerFull, len(cs))
		for j, c := range cs {
			cf := ConsumerFull{Name: c.name, SeenTime: c.rec.SeenTime, Pending: int64(c.rec.Pending), PEL: []PendingEntry{}}
			if err := tx.walkPEL(g, c.name, true, ID{}, MaxID, collect(&cf.PEL, false)); err != nil {
				return nil, err
			}
			gf.Consumers[j] = cf
		}
		out = append(out, gf)
	}
	return out, nil
}
