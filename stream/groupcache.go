package stream

import (
	"sync"
)

// The group cache keeps decoded consumer-group records in memory — a
// group's record (last-delivered-id, entries-read, counts) and the
// records of its consumers — so that XREADGROUP, XACK and the other group
// commands find them without a read from Pebble. It also keeps, for each
// group, bounds on the IDs in its PEL (pelBounds), which are not stored
// at all: they let XREADGROUP ">" skip looking for pending entries among
// the new ones, and let PEL walks start past the tombstones that XACK
// leaves at the head of the PEL. And it mirrors the newest part of each
// group's PEL (pelMirror), where XACK finds what it acknowledges.
//
// An entry is keyed by the group record's storage key, which holds the
// database, the stream's key, its version and the group's name: DEL,
// overwrite, RENAME and FLUSHDB give a stream a new version, so a record
// of an earlier incarnation can never be found again (it is evicted in
// time, and a flush clears the cache).
//
// The cache holds committed state only, by the same rules as the
// metadata cache (metacache.go):
//   - A write transaction stages every group and consumer record it
//     writes or deletes (groupOp.flush, XGROUP CREATE/DESTROY/DELCONSUMER),
//     and every record it reads from storage, in Tx.groups; its reads look
//     there first.
//   - Update publishes the staged records after the batch applied, with
//     Engine.mu held exclusively; a rolled-back function's records are cut
//     from the log (commit.go), a failed group publishes nothing.
//   - A View reads committed state, so what it reads from storage may fill
//     the cache directly.
//
// Locking: as the metadata cache — readers and a writer building its
// batch take groupCache.mu around each access; publishing holds
// Engine.mu exclusively and is alone with the cache.
//
// Memory is bounded by a number of records (a group and each of its
// consumers count one each); eviction is CLOCK over groups, a group
// leaving with its consumers.

// DefaultGroupCacheRecords is how many records the group cache holds when
// Options.GroupCacheRecords is 0: about 100 bytes each plus names.
const DefaultGroupCacheRecords = 50000

// pelBounds bound the IDs of a group's pending entries: lo <= every
// pending ID <= hi. They need not be tight; a group with nothing pending
// has lo > hi (pelEmpty). 0-0 and MaxID bound any PEL (pelAny).
type pelBounds struct{ lo, hi ID }

var (
	pelAny   = pelBounds{ID{}, MaxID}
	pelEmpty = pelBounds{MaxID, ID{}}
)

// boundsFor returns what is known of a PEL of pending entries without
// looking at it.
func boundsFor(pending uint64) pelBounds {
	if pending == 0 {
		return pelEmpty
	}
	return pelAny
}

// add widens b to include id.
func (b *pelBounds) add(id ID) {
	if id.Less(b.lo) {
		b.lo = id
	}
	if b.hi.Less(id) {
		b.hi = id
	}
}

// remove narrows b when id, just removed from the PEL, was at one end.
func (b *pelBounds) remove(id ID, pending uint64) {
	if pending == 0 {
		*b = pelEmpty
		return
	}
	if id == b.lo {
		b.lo, _ = id.Next()
	}
	if id == b.hi {
		b.hi, _ = id.Prev()
	}
}

// laterID returns the greater of a and b.
func laterID(a, b ID) ID {
	if a.Less(b) {
		return b
	}
	return a
}

// excludes reports whether no pending ID lies in [lo, hi].
func (b pelBounds) excludes(lo, hi ID) bool {
	return hi.Less(b.lo) || b.hi.Less(lo)
}

// pelMirror holds every pending entry of a group whose ID is at least
// from, as committed. XACK acknowledges entries delivered moments
// before: looked up in storage, each lookup positioned an iterator on
// every level of the LSM, though the records were in the memtable; under
// bench/groupbench that was most of XACK's cost
// (bench/results/HISTORY.md, "Consumer groups on one thread").
//
// A mirror starts when its group enters the cache with bounded PEL
// bounds: nothing is pending from bounds.hi on, so it starts there,
// empty. The transactions' changes to the PEL reach it as they reach the
// rest of the cache (staged, published in order): an entry added at or
// above from is mirrored, one removed is dropped. A mirror that would
// outgrow mirrorMax is emptied and starts again above its highest ID, so
// the entries that a consumer leaves unacknowledged age out of it.
type pelMirror struct {
	on   bool // off: nothing is known, read storage
	from ID
	top  ID // the highest ID mirrored since the mirror (re)started
	m    map[ID]mirroredNack
}

// mirroredNack is a pending entry in a mirror.
type mirroredNack struct {
	owner        string
	deliveryTime int64
	deliveries   uint64
}

// mirrorMax bounds a mirror's entries: 50 consumers reading COUNT 10 keep
// about 500 pending, a tenth of it.
const mirrorMax = 4096

// startMirror starts ge's mirror above the PEL bounds pel, if they bound
// anything.
func startMirror(ge *groupEntry, pel pelBounds) {
	if pel.hi == MaxID {
		return
	}
	from, _ := pel.hi.Next()
	ge.recent = pelMirror{on: true, from: from, top: pel.hi}
}

// covers reports whether the mirror knows whether id is pending.
func (m *pelMirror) covers(id ID) bool { return m.on && !id.Less(m.from) }

// groupCache is the bounded map from group record key to groupEntry.
type groupCache struct {
	mu  sync.Mutex // taken around each access, except when Engine.mu is held exclusively
	max int        // most records held; at least 2
	n   int        // guarded by mu or exclusive Engine.mu: records held
	// mirrored is how many pending entries the groups' PEL mirrors hold,
	// at most max; guarded as n.
	mirrored int
	m        map[string]*groupEntry // guarded by mu or exclusive Engine.mu
	ring     []*groupEntry          // guarded by mu or exclusive Engine.mu: the CLOCK
	hand     int                    // guarded by mu or exclusive Engine.mu
}

type groupEntry struct {
	key    string // the group record's storage key
	rec    groupRec
	pel    pelBounds
	recent pelMirror
	// consumers holds the records of some of the group's consumers: a
	// name missing here is looked up in storage.
	consumers map[string]consumerRec
	slot      int
	ref       bool
}

// newGroupCache returns a cache of at most max records, or nil (no
// cache) when max < 0.
func newGroupCache(records int) *groupCache {
	if records < 0 {
		return nil
	}
	if records == 0 {
		records = DefaultGroupCacheRecords
	}
	return &groupCache{max: max(records, 2), m: make(map[string]*groupEntry)}
}

// group returns the entry of the group record key, nil if not held.
func (c *groupCache) group(key []byte) *groupEntry {
	ge := c.m[string(key)]
	if ge != nil {
		ge.ref = true
	}
	return ge
}

// putGroup stores a group record and its PEL bounds, keeping the
// consumers already held.
func (c *groupCache) putGroup(key string, rec groupRec, pel pelBounds) {
	if ge := c.m[key]; ge != nil {
		ge.rec, ge.pel = rec, pel
		return
	}
	c.makeRoom(1)
	ge := &groupEntry{key: key, rec: rec, pel: pel, slot: len(c.ring)}
	startMirror(ge, pel)
	c.ring = append(c.ring, ge)
	c.m[key] = ge
	c.n++
}

// putNack mirrors pending entry id of the group at key, if its mirror
// covers id. The mirrors of all groups hold at most as many entries as
// the cache holds records (mirrored).
func (c *groupCache) putNack(key string, id ID, n mirroredNack) {
	ge := c.m[key]
	if ge == nil || !ge.recent.covers(id) {
		return
	}
	m := &ge.recent
	if _, ok := m.m[id]; ok {
		m.m[id] = n
		return
	}
	if len(m.m) >= mirrorMax || c.mirrored >= c.max {
		c.mirrored -= len(m.m)
		clear(m.m)
		top := laterID(m.top, id)
		if top == MaxID {
			m.on = false
			return
		}
		m.from, _ = top.Next()
		m.top = top
		return
	}
	if m.m == nil {
		m.m = make(map[ID]mirroredNack)
	}
	m.m[id] = n
	m.top = laterID(m.top, id)
	c.mirrored++
}

// removeNack drops pending entry id from the mirror of the group at key.
func (c *groupCache) removeNack(key string, id ID) {
	if ge := c.m[key]; ge != nil {
		if _, ok := ge.recent.m[id]; ok {
			delete(ge.recent.m, id)
			c.mirrored--
		}
	}
}

// putConsumer stores a consumer record of a group held; a group not
// held, or holding its share of consumers already, is left alone.
func (c *groupCache) putConsumer(key string, name []byte, rec consumerRec) {
	ge := c.m[key]
	if ge == nil {
		return
	}
	if _, ok := ge.consumers[string(name)]; ok {
		ge.consumers[string(name)] = rec
		return
	}
	// One group may not take the whole cache from the others.
	if len(ge.consumers) >= c.max/4 {
		return
	}
	if ge.consumers == nil {
		ge.consumers = make(map[string]consumerRec)
	}
	ge.ref = true // room is made for the others, not at this group's cost
	c.makeRoom(1)
	if c.m[key] != ge {
		return // evicted all the same: the cache holds this group alone
	}
	ge.consumers[string(name)] = rec
	c.n++
}

// removeConsumer forgets a consumer.
func (c *groupCache) removeConsumer(key string, name []byte) {
	if ge := c.m[key]; ge != nil {
		if _, ok := ge.consumers[string(name)]; ok {
			delete(ge.consumers, string(name))
			c.n--
		}
	}
}

// removeGroup forgets a group and its consumers.
func (c *groupCache) removeGroup(key string) {
	ge := c.m[key]
	if ge == nil {
		return
	}
	delete(c.m, key)
	c.n -= 1 + len(ge.consumers)
	c.mirrored -= len(ge.recent.m)
	last := c.ring[len(c.ring)-1]
	c.ring[ge.slot] = last
	last.slot = ge.slot
	c.ring[len(c.ring)-1] = nil
	c.ring = c.ring[:len(c.ring)-1]
	if c.hand >= len(c.ring) {
		c.hand = 0
	}
}

// makeRoom evicts groups until n more records fit.
func (c *groupCache) makeRoom(n int) {
	for c.n+n > c.max && len(c.ring) > 0 {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		if ge := c.ring[c.hand]; ge.ref {
			ge.ref = false
			c.hand++
			continue
		}
		c.removeGroup(c.ring[c.hand].key)
	}
}

// clear forgets everything.
func (c *groupCache) clear() {
	clear(c.m)
	clear(c.ring)
	c.ring, c.hand, c.n, c.mirrored = c.ring[:0], 0, 0, 0
}

// groupStage is what a write transaction staged for the group cache: a
// log of records in the order it wrote (or read) them, published in that
// order, with indexes to the latest of each.
type groupStage struct {
	log       []stagedRec
	groups    map[string]int // group key → latest index in log
	consumers map[string]int // group key + consumer name → latest index
	nacks     map[nackRef]int
	// resets maps a group key to the index of its latest removal: its
	// consumers staged before it, and those in the cache, are gone.
	resets map[string]int
}

type stagedKind uint8

const (
	stagedGroup stagedKind = iota
	stagedGroupGone
	stagedConsumer
	stagedConsumerGone
	stagedNack
	stagedNackGone
)

type stagedRec struct {
	kind stagedKind
	key  string // the group record's key
	name string // consumer records: the consumer's name; a nack's owner
	rec  groupRec
	pel  pelBounds
	crec consumerRec
	id   ID // nacks: the entry's ID
	nack mirroredNack
}

// nackRef names a pending entry of a group.
type nackRef struct {
	key string
	id  ID
}

func (st *groupStage) append(r stagedRec) {
	if st.groups == nil {
		st.groups, st.consumers, st.resets = make(map[string]int), make(map[string]int), make(map[string]int)
		st.nacks = make(map[nackRef]int)
	}
	st.index(len(st.log), &r)
	st.log = append(st.log, r)
}

func (st *groupStage) index(i int, r *stagedRec) {
	switch r.kind {
	case stagedGroup:
		st.groups[r.key] = i
	case stagedGroupGone:
		st.groups[r.key] = i
		st.resets[r.key] = i
	case stagedNack, stagedNackGone:
		st.nacks[nackRef{r.key, r.id}] = i
	default:
		st.consumers[r.key+r.name] = i
	}
}

// nack returns the staged state of pending entry id of the group at key,
// as consumer does.
func (st *groupStage) nack(key string, id ID) (r *stagedRec, ok, reset bool) {
	if len(st.log) == 0 {
		return nil, false, false
	}
	ri, reset := st.resets[key]
	if i, ok := st.nacks[nackRef{key, id}]; ok && (!reset || i > ri) {
		return &st.log[i], true, reset
	}
	return nil, false, reset
}

// group returns the staged state of the group record key: ok false when
// nothing is staged, gone when it was removed.
func (st *groupStage) group(key []byte) (r *stagedRec, ok bool) {
	i, ok := st.groups[string(key)]
	if !ok {
		return nil, false
	}
	return &st.log[i], true
}

// consumer returns the staged record of a consumer of the group at key:
// ok false when nothing is staged for it; reset when the group was
// removed in this transaction, so that what the cache holds for it is
// void.
func (st *groupStage) consumer(key string, name []byte) (r *stagedRec, ok, reset bool) {
	if len(st.log) == 0 {
		return nil, false, false
	}
	ri, reset := st.resets[key]
	if i, ok := st.consumers[key+string(name)]; ok && (!reset || i > ri) {
		return &st.log[i], true, reset
	}
	return nil, false, reset
}

// rollback cuts the log to its first n records.
func (st *groupStage) rollback(n int) {
	if n >= len(st.log) {
		return
	}
	clear(st.log[n:])
	st.log = st.log[:n]
	clear(st.groups)
	clear(st.consumers)
	clear(st.resets)
	clear(st.nacks)
	for i := range st.log {
		st.index(i, &st.log[i])
	}
}

// reset empties the stage for the next transaction.
func (st *groupStage) reset() {
	clear(st.log)
	st.log = st.log[:0]
	if cap(st.log) > 4096 {
		st.log = nil
	}
	clear(st.groups)
	clear(st.consumers)
	clear(st.resets)
	clear(st.nacks)
}

// publishGroups applies what the transaction staged to the group cache.
// Update calls it once the batch is applied, with Engine.mu held
// exclusively.
func (tx *Tx) publishGroups() {
	c := tx.e.gcache
	if c == nil {
		return
	}
	if tx.flushedAll || len(tx.flushed) > 0 {
		// Every group of the database went with a new version of its
		// stream; nothing held can be found again.
		c.clear()
	}
	for i := range tx.groups.log {
		r := &tx.groups.log[i]
		switch r.kind {
		case stagedGroup:
			c.putGroup(r.key, r.rec, r.pel)
		case stagedGroupGone:
			c.removeGroup(r.key)
		case stagedConsumer:
			c.putConsumer(r.key, []byte(r.name), r.crec)
		case stagedConsumerGone:
			c.removeConsumer(r.key, []byte(r.name))
		case stagedNack:
			c.putNack(r.key, r.id, r.nack)
		case stagedNackGone:
			c.removeNack(r.key, r.id)
		}
	}
}

// stageGroup records the group g's record and PEL bounds as the
// transaction now has them.
func (tx *Tx) stageGroup(g *groupOp) {
	if tx.e.gcache != nil && tx.b != nil {
		tx.groups.append(stagedRec{kind: stagedGroup, key: g.gkey, rec: g.rec, pel: g.pel})
	}
}

// stageConsumer records a consumer record of g as the transaction now
// has it.
func (tx *Tx) stageConsumer(g *groupOp, c *consumerState) {
	if tx.e.gcache != nil && tx.b != nil {
		tx.groups.append(stagedRec{kind: stagedConsumer, key: g.gkey, name: string(c.name), crec: c.rec})
	}
}

// stageGone records that a group (name nil) or one consumer was removed.
func (tx *Tx) stageGone(gkey string, consumer []byte) {
	if tx.e.gcache == nil || tx.b == nil {
		return
	}
	if consumer == nil {
		tx.groups.append(stagedRec{kind: stagedGroupGone, key: gkey})
		return
	}
	tx.groups.append(stagedRec{kind: stagedConsumerGone, key: gkey, name: string(consumer)})
}

// cachedGroup looks the group record key up in the transaction's stage
// and in the cache: found false when neither knows it (read storage),
// exists false when the group was removed.
func (tx *Tx) cachedGroup(key []byte) (rec groupRec, pel pelBounds, found, exists bool) {
	c := tx.e.gcache
	if c == nil {
		return groupRec{}, pelBounds{}, false, false
	}
	if tx.b != nil {
		if r, ok := tx.groups.group(key); ok {
			if r.kind == stagedGroupGone {
				return groupRec{}, pelBounds{}, true, false
			}
			return r.rec, r.pel, true, true
		}
	} else if tx.snap != nil {
		// A View during an apply: the cache may not match its snapshot.
		return groupRec{}, pelBounds{}, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ge := c.group(key); ge != nil {
		return ge.rec, ge.pel, true, true
	}
	return groupRec{}, pelBounds{}, false, false
}

// loadedGroup records a group record read from storage: staged in a
// write transaction (the batch may hold writes not yet committed, e.g. a
// RENAME's copy), put in the cache by a View (committed state).
func (tx *Tx) loadedGroup(g *groupOp) {
	c := tx.e.gcache
	if c == nil {
		return
	}
	if tx.b != nil {
		tx.stageGroup(g)
		return
	}
	if tx.snap != nil {
		return
	}
	c.mu.Lock()
	c.putGroup(g.gkey, g.rec, g.pel)
	c.mu.Unlock()
}

// cachedConsumer looks a consumer of g up in the stage and the cache, as
// cachedGroup does.
func (tx *Tx) cachedConsumer(g *groupOp, name []byte) (rec consumerRec, found, exists bool) {
	c := tx.e.gcache
	if c == nil {
		return consumerRec{}, false, false
	}
	if tx.b != nil {
		r, ok, reset := tx.groups.consumer(g.gkey, name)
		switch {
		case ok && r.kind == stagedConsumerGone:
			return consumerRec{}, true, false
		case ok:
			return r.crec, true, true
		case reset:
			return consumerRec{}, false, false
		}
	} else if tx.snap != nil {
		return consumerRec{}, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ge := c.m[g.gkey]; ge != nil {
		if rec, ok := ge.consumers[string(name)]; ok {
			return rec, true, true
		}
	}
	return consumerRec{}, false, false
}

// loadedConsumer records a consumer record read from storage, as
// loadedGroup does.
func (tx *Tx) loadedConsumer(g *groupOp, c *consumerState) {
	gc := tx.e.gcache
	if gc == nil {
		return
	}
	if tx.b != nil {
		tx.stageConsumer(g, c)
		return
	}
	if tx.snap != nil {
		return
	}
	gc.mu.Lock()
	gc.putConsumer(g.gkey, c.name, c.rec)
	gc.mu.Unlock()
}

// stageNack records that pending entry id of g now is n (nil: the entry
// is no longer pending).
func (tx *Tx) stageNack(g *groupOp, id ID, n *nack) {
	if tx.e.gcache == nil || tx.b == nil {
		return
	}
	r := stagedRec{kind: stagedNackGone, key: g.gkey, id: id}
	if n != nil {
		// A command stages its entries for one owner: one string.
		if last := len(tx.groups.log) - 1; last >= 0 && tx.groups.log[last].kind == stagedNack && tx.groups.log[last].name == string(n.Owner) {
			r.name = tx.groups.log[last].name
		} else {
			r.name = string(n.Owner)
		}
		r.kind = stagedNack
		r.nack = mirroredNack{owner: r.name, deliveryTime: n.DeliveryTime, deliveries: n.Deliveries}
	}
	tx.groups.append(r)
}

// mirroredNacks looks ids (sorted, each once) up in the transaction's
// stage and the PEL mirror of g. It appends the entries found pending to
// out, their owners' names to owners (as decodeNackInto), and returns
// the IDs that neither could tell, to be read from storage, in ids's
// array.
func (tx *Tx) mirroredNacks(g *groupOp, ids []ID, out []pendingEntry, owners []byte) ([]ID, []pendingEntry, []byte) {
	c := tx.e.gcache
	if c == nil || tx.b == nil {
		return ids, out, owners
	}
	found := func(id ID, n *mirroredNack) {
		at := len(owners)
		owners = append(owners, n.owner...)
		out = append(out, pendingEntry{id, nack{DeliveryTime: n.deliveryTime, Deliveries: n.deliveries, Owner: owners[at:len(owners):len(owners)]}})
	}
	unknown := ids[:0]
	locked := false
	for _, id := range ids {
		r, ok, reset := tx.groups.nack(g.gkey, id)
		switch {
		case ok && r.kind == stagedNack:
			found(id, &r.nack)
			continue
		case ok:
			continue
		case reset:
			unknown = append(unknown, id)
			continue
		}
		if !locked {
			c.mu.Lock()
			locked = true
		}
		ge := c.m[g.gkey]
		if ge == nil || !ge.recent.covers(id) {
			unknown = append(unknown, id)
			continue
		}
		if n, ok := ge.recent.m[id]; ok {
			found(id, &n)
		}
	}
	if locked {
		c.mu.Unlock()
	}
	return unknown, out, owners
}

// learnPEL records tighter PEL bounds that a View found walking a
// committed PEL, for the group whose committed record is rec.
func (tx *Tx) learnPEL(g *groupOp) {
	c := tx.e.gcache
	if c == nil || tx.b != nil || tx.snap != nil {
		return
	}
	c.mu.Lock()
	if ge := c.m[g.gkey]; ge != nil && ge.rec == g.rec {
		ge.pel = g.pel
	}
	c.mu.Unlock()
}
