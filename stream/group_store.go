package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/eddy-streams/eddy/storage"
)

// Group record values. Each is count:uvarint, then that many uvarints in
// the order of the fields; fields are only ever appended, and a decoder
// reading an older record leaves the missing ones zero (as streamMeta).
//
//	group     | last.ms | last.seq | entries-read+1 (0: unknown) | consumers | pending
//	consumer  | seen-time | pending
//	pel by id | delivery-time | delivery-count | then the owner's name: len:uvarint, bytes
//	pel owner | (empty)

type groupRec struct {
	LastID      ID
	EntriesRead int64 // EntriesReadUnknown when not known
	Consumers   uint64
	Pending     uint64
}

type consumerRec struct {
	SeenTime int64
	Pending  uint64
}

type nack struct {
	DeliveryTime int64
	Deliveries   uint64
	Owner        []byte
}

func appendUvarints(dst []byte, vals ...uint64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(vals)))
	for _, v := range vals {
		dst = binary.AppendUvarint(dst, v)
	}
	return dst
}

// readUvarints decodes a record written by appendUvarints into out,
// returning the bytes after it.
func readUvarints(b []byte, out []uint64) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, storage.ErrCorrupt
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, storage.ErrCorrupt
		}
		b = b[k:]
		if i < uint64(len(out)) {
			out[i] = v
		}
	}
	return b, nil
}

func (g *groupRec) appendBinary(dst []byte) []byte {
	return appendUvarints(dst, g.LastID.Ms, g.LastID.Seq, uint64(g.EntriesRead+1), g.Consumers, g.Pending)
}

func decodeGroupRec(b []byte) (groupRec, error) {
	var v [5]uint64
	if _, err := readUvarints(b, v[:]); err != nil {
		return groupRec{}, err
	}
	return groupRec{LastID: ID{v[0], v[1]}, EntriesRead: int64(v[2]) - 1, Consumers: v[3], Pending: v[4]}, nil
}

func (c *consumerRec) appendBinary(dst []byte) []byte {
	return appendUvarints(dst, uint64(c.SeenTime), c.Pending)
}

func decodeConsumerRec(b []byte) (consumerRec, error) {
	var v [2]uint64
	if _, err := readUvarints(b, v[:]); err != nil {
		return consumerRec{}, err
	}
	return consumerRec{SeenTime: int64(v[0]), Pending: v[1]}, nil
}

func (n *nack) appendBinary(dst []byte) []byte {
	dst = appendUvarints(dst, uint64(n.DeliveryTime), n.Deliveries)
	dst = binary.AppendUvarint(dst, uint64(len(n.Owner)))
	return append(dst, n.Owner...)
}

// decodeNack decodes a PEL entry, copying the owner's name out of b
// (which may be iterator memory).
func decodeNack(b []byte) (nack, error) {
	n, err := decodeNackInPlace(b)
	n.Owner = append([]byte(nil), n.Owner...)
	return n, err
}

// decodeNackInto is decodeNack copying the owner's name to the end of
// buf, returned grown: many entries share one array (a grown copy leaves
// the names already carved out where they were).
func decodeNackInto(b, buf []byte) (nack, []byte, error) {
	n, err := decodeNackInPlace(b)
	if err != nil {
		return nack{}, buf, err
	}
	at := len(buf)
	buf = append(buf, n.Owner...)
	n.Owner = buf[at:len(buf):len(buf)]
	return n, buf, nil
}

// decodeNackInPlace is decodeNack with Owner pointing into b, for values
// the caller owns.
func decodeNackInPlace(b []byte) (nack, error) {
	var v [2]uint64
	rest, err := readUvarints(b, v[:])
	if err != nil {
		return nack{}, err
	}
	l, k := binary.Uvarint(rest)
	if k <= 0 || l != uint64(len(rest)-k) {
		return nack{}, storage.ErrCorrupt
	}
	return nack{DeliveryTime: int64(v[0]), Deliveries: v[1], Owner: rest[k:]}, nil
}

// groupOp is one command's work on one consumer group: the group record
// and the consumer records it touches are cached and written back by
// flush, so that every count changes in the same batch as the PEL records
// it counts.
type groupOp struct {
	tx    *Tx
	s     *streamRef
	name  []byte
	gkey  string // the group record's key: the group cache's too
	rec   groupRec
	dirty bool
	// pel bounds the pending IDs (groupcache.go); pelLearned: a walk of
	// the PEL tightened them, worth keeping though the record is clean.
	pel        pelBounds
	pelLearned bool
	consumers  map[string]*consumerState
	// key and val are scratch for the PEL records written or read one at
	// a time: the batch copies what it is given and Get keeps nothing.
	key, val []byte
}

type consumerState struct {
	name  []byte
	rec   consumerRec
	dirty bool
}

// openGroup loads group of stream s, from the group cache or storage; ok
// is false if it does not exist.
func (tx *Tx) openGroup(s *streamRef, group []byte) (*groupOp, bool, error) {
	// Room for a key of the group with a consumer name and an ID, so the
	// scratch key does not grow piecemeal.
	key := storage.AppendGroupKey(make([]byte, 0, 96+len(s.key)+len(group)), s.db, s.key, s.meta.Version, group)
	rec, pel, found, exists := tx.cachedGroup(key)
	if found && !exists {
		return nil, false, nil
	}
	g := &groupOp{tx: tx, s: s, name: tx.keep(group), gkey: string(key), rec: rec, pel: pel, key: key[:0]}
	if found {
		return g, true, nil
	}
	v, ok, err := tx.r.Get(key)
	if err != nil || !ok {
		return nil, false, err
	}
	if g.rec, err = decodeGroupRec(v); err != nil {
		return nil, false, err
	}
	g.pel = boundsFor(g.rec.Pending)
	tx.loadedGroup(g)
	return g, true, nil
}

// loadGroup loads the stream at key and its group: ErrNoSuchKey,
// ErrWrongType or ErrNoGroup when either is missing.
func (tx *Tx) loadGroup(db int, key, group []byte) (*groupOp, error) {
	s, ok, err := tx.loadStream(db, key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoSuchKey
	}
	g, ok, err := tx.openGroup(s, group)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoGroup
	}
	return g, nil
}

func (s *streamRef) groupKey(group []byte) []byte {
	return storage.AppendGroupKey(nil, s.db, s.key, s.meta.Version, group)
}

func (g *groupOp) consumerKey(name []byte) []byte {
	return storage.AppendConsumerKey(nil, g.s.db, g.s.key, g.s.meta.Version, g.name, name)
}

func (g *groupOp) pelKey(id ID) []byte {
	return storage.AppendPELKey(nil, g.s.db, g.s.key, g.s.meta.Version, g.name, id.Ms, id.Seq)
}

func (g *groupOp) ownerKey(owner []byte, id ID) []byte {
	return storage.AppendPELConsumerKey(nil, g.s.db, g.s.key, g.s.meta.Version, g.name, owner, id.Ms, id.Seq)
}

// consumer returns the consumer called name, nil if it does not exist
// and !create. A consumer created here gets seen-time now, as Redis's
// streamCreateConsumer.
func (g *groupOp) consumer(name []byte, create bool) (*consumerState, error) {
	if c, ok := g.consumers[string(name)]; ok {
		return c, nil
	}
	c := &consumerState{name: g.tx.keep(name)}
	rec, found, ok := g.tx.cachedConsumer(g, name)
	if !found {
		g.key = storage.AppendConsumerKey(g.key[:0], g.s.db, g.s.key, g.s.meta.Version, g.name, name)
		var v []byte
		var err error
		if v, ok, err = g.tx.r.Get(g.key); err != nil {
			return nil, err
		}
		if ok {
			if rec, err = decodeConsumerRec(v); err != nil {
				return nil, err
			}
			c.rec = rec
			g.tx.loadedConsumer(g, c)
		}
	}
	switch {
	case ok:
		c.rec = rec
	case create:
		c.rec.SeenTime = g.tx.now
		c.dirty = true
		g.rec.Consumers++
		g.dirty = true
	default:
		return nil, nil
	}
	if g.consumers == nil {
		g.consumers = make(map[string]*consumerState, 2)
	}
	g.consumers[string(c.name)] = c
	return c, nil
}

// seen looks the consumer up the way Redis's streamLookupConsumer with
// SLC_DEFAULT does, creating it if needed: its seen-time becomes now.
func (g *groupOp) seen(name []byte) (*consumerState, error) {
	c, err := g.consumer(name, true)
	if err != nil {
		return nil, err
	}
	c.rec.SeenTime = g.tx.now
	c.dirty = true
	return c, nil
}

// scratchPELKey returns the key of id's PEL entry in g.key, valid until
// the next scratch key.
func (g *groupOp) scratchPELKey(id ID) []byte {
	g.key = storage.AppendPELKey(g.key[:0], g.s.db, g.s.key, g.s.meta.Version, g.name, id.Ms, id.Seq)
	return g.key
}

// scratchOwnerKey is scratchPELKey for the per-owner index.
func (g *groupOp) scratchOwnerKey(owner []byte, id ID) []byte {
	g.key = storage.AppendPELConsumerKey(g.key[:0], g.s.db, g.s.key, g.s.meta.Version, g.name, owner, id.Ms, id.Seq)
	return g.key
}

// getNack reads the PEL entry of id.
func (g *groupOp) getNack(id ID) (nack, bool, error) {
	v, ok, err := g.tx.r.Get(g.scratchPELKey(id))
	if err != nil || !ok {
		return nack{}, false, err
	}
	n, err := decodeNackInPlace(v) // v is Get's own copy
	return n, err == nil, err
}

// pendingEntry is a PEL entry with its ID.
type pendingEntry struct {
	id ID
	n  nack
}

// pendingIn returns the PEL entries with lo <= ID <= hi in ID order, found
// with one iterator rather than a Get per ID: for ">" the range is almost
// always empty (only XGROUP SETID moving the group back, or XCLAIM FORCE,
// leaves entries after the last-delivered-id pending), which the PEL
// bounds usually tell without a look.
func (g *groupOp) pendingIn(lo, hi ID) ([]pendingEntry, error) {
	if g.rec.Pending == 0 || g.pel.excludes(lo, hi) {
		return nil, nil
	}
	lower := g.pelKey(lo)
	upper := append(g.pelKey(hi), 0)
	it, err := g.tx.r.NewIter(lower, upper)
	if err != nil {
		return nil, err
	}
	var out []pendingEntry
	var owners []byte
	for ok := it.First(); ok; ok = it.Next() {
		ms, seq, err := storage.DecodeIDSuffix(it.Key())
		if err != nil {
			it.Close()
			return nil, err
		}
		var n nack
		if n, owners, err = decodeNackInto(it.Value(), owners); err != nil {
			it.Close()
			return nil, err
		}
		out = append(out, pendingEntry{ID{ms, seq}, n})
	}
	return out, it.Close()
}

// pendingOf returns the PEL entries of ids, each once and in ID order.
// The group cache's PEL mirror (groupcache.go) tells of the recent ones;
// the others are read with one iterator instead of a Get per ID (each
// Get builds an iterator of its own, and was slower under
// bench/groupbench). The IDs one XACK names were mostly delivered
// together, and are adjacent in the PEL: from a record found the
// iterator steps to the next before it seeks, and a step is a fraction
// of a seek, which positions every level of the LSM anew.
func (g *groupOp) pendingOf(ids []ID) ([]pendingEntry, error) {
	if g.rec.Pending == 0 || len(ids) == 0 {
		return nil, nil
	}
	sorted := make([]ID, 0, len(ids))
	for _, id := range ids {
		if !g.pel.excludes(id, id) {
			sorted = append(sorted, id)
		}
	}
	if len(sorted) == 0 {
		return nil, nil
	}
	slices.SortFunc(sorted, ID.Compare)
	sorted = slices.Compact(sorted)
	out := make([]pendingEntry, 0, len(sorted))
	var owners []byte
	sorted, out, owners = g.tx.mirroredNacks(g, sorted, out, owners)
	if len(sorted) == 0 {
		return out, nil
	}
	mirrored := len(out)
	lower := g.pelKey(sorted[0])
	upper := append(g.pelKey(sorted[len(sorted)-1]), 0)
	it, err := g.tx.r.NewIter(lower, upper)
	if err != nil {
		return nil, err
	}
	// at: the iterator is on the first record after the last ID looked
	// up, so a record past the next ID's key means that ID has none.
	at := false
	for _, id := range sorted {
		k := g.scratchPELKey(id)
		c := -1
		if at {
			c = bytes.Compare(it.Key(), k)
		}
		if c < 0 {
			if !it.SeekGE(k) {
				break // no record at or after k
			}
			at, c = true, bytes.Compare(it.Key(), k)
		}
		if c > 0 {
			continue
		}
		var n nack
		if n, owners, err = decodeNackInto(it.Value(), owners); err != nil {
			it.Close()
			return nil, err
		}
		out = append(out, pendingEntry{id, n})
		at = it.Next()
	}
	if mirrored > 0 && len(out) > mirrored {
		slices.SortFunc(out, func(a, b pendingEntry) int { return a.id.Compare(b.id) })
	}
	return out, it.Close()
}

// PEL records (both the by-ID record and the owner index) are removed
// with SingleDelete: acknowledged soon after delivery, record and removal
// usually meet in the memtable and vanish at its flush, where a Delete's
// tombstone would be compacted down level by level (profiled under
// bench/groupbench, that compaction was half of the server's CPU).
// SingleDelete is only correct for a key Set at most once since it was
// last deleted, so every write of a PEL record goes through setPEL and
// deletePEL, and a record is only ever Set where none is: addNack writes
// IDs not pending, moveNack removes before it adds, and putNack, the one
// rewrite in place, removes the old record first. The other writers keep
// it too: XGROUP DESTROY and XGROUP DELCONSUMER's owner index use
// DeleteRange, which ends a key's history as Delete does; RENAME copies
// the records under a new version, whose keys were never written; a
// replica applies the primary's batches unchanged (each one once, with
// its position in the same batch), so each key has the same history
// there. checkPELWrites verifies the rule as the records are written.

// checkPELWrites makes setPEL and deletePEL look the key up first and
// fail with errPELWrite when a Set would overwrite a record or a
// SingleDelete find none. The stream tests turn it on (it costs a Get
// per write), as does EDDY_CHECK_PEL=1 in a server's environment, for
// the end-to-end tests.
var checkPELWrites = os.Getenv("EDDY_CHECK_PEL") == "1"

// errPELWrite is a PEL write that breaks SingleDelete's rule.
var errPELWrite = errors.New("stream: PEL record written twice without a delete, or deleted when absent")

// setPEL writes a PEL record that does not exist. The by-ID record's
// writers (setNack, deleteNack, putNack) stage the change for the PEL
// mirror as well.
func (g *groupOp) setPEL(key, val []byte) error {
	if checkPELWrites {
		if err := g.checkPEL(key, false); err != nil {
			return err
		}
	}
	return g.tx.b.Set(key, val)
}

// deletePEL removes a PEL record that exists. The batch's Set and Delete
// also void a deferred write of the key; PEL records are never deferred,
// so the storage batch's SingleDelete is called directly.
func (g *groupOp) deletePEL(key []byte) error {
	if checkPELWrites {
		if err := g.checkPEL(key, true); err != nil {
			return err
		}
	}
	return g.tx.b.Batch.SingleDelete(key)
}

func (g *groupOp) checkPEL(key []byte, want bool) error { return checkPELKey(g.tx.r, key, want) }

// checkPELKey fails with errPELWrite unless key exists in r as want says.
func checkPELKey(r reader, key []byte, want bool) error {
	_, ok, err := r.Get(key)
	if err != nil {
		return err
	}
	if ok != want {
		return fmt.Errorf("%w: %q", errPELWrite, key)
	}
	return nil
}

// putNack rewrites the PEL entry of id (same owner): SingleDelete, then
// Set, so that the key is still Set once since its last delete.
func (g *groupOp) putNack(id ID, n *nack) error {
	if err := g.deletePEL(g.scratchPELKey(id)); err != nil {
		return err
	}
	return g.setNack(id, n)
}

// setNack writes the PEL entry of id, which is not pending.
func (g *groupOp) setNack(id ID, n *nack) error {
	g.val = n.appendBinary(g.val[:0])
	if err := g.setPEL(g.scratchPELKey(id), g.val); err != nil {
		return err
	}
	g.tx.stageNack(g, id, n)
	return nil
}

// deleteNack removes the PEL entry of id, which is pending; the owner's
// index record is the caller's.
func (g *groupOp) deleteNack(id ID) error {
	if err := g.deletePEL(g.scratchPELKey(id)); err != nil {
		return err
	}
	g.tx.stageNack(g, id, nil)
	return nil
}

// addNack adds id to the PEL, owned by c.
func (g *groupOp) addNack(id ID, c *consumerState, n *nack) error {
	n.Owner = c.name
	if err := g.setNack(id, n); err != nil {
		return err
	}
	g.queueOwner(c.name, id, false)
	g.rec.Pending++
	g.pel.add(id)
	g.dirty = true
	c.rec.Pending++
	c.dirty = true
	return nil
}

// removeNack removes id, whose entry is n, from the PEL.
func (g *groupOp) removeNack(id ID, n *nack) error {
	if err := g.deleteNack(id); err != nil {
		return err
	}
	g.queueOwner(n.Owner, id, true)
	g.rec.Pending--
	g.pel.remove(id, g.rec.Pending)
	g.dirty = true
	owner, err := g.consumer(n.Owner, false)
	if err != nil {
		return err
	}
	if owner == nil {
		return storage.ErrCorrupt
	}
	owner.rec.Pending--
	owner.dirty = true
	return nil
}

// moveNack gives pending entry id (entry n) to c and writes n.
func (g *groupOp) moveNack(id ID, n *nack, c *consumerState) error {
	if bytes.Equal(n.Owner, c.name) {
		return g.putNack(id, n)
	}
	if err := g.removeNack(id, n); err != nil {
		return err
	}
	return g.addNack(id, c, n)
}

// queueOwner queues the write of owner's index record of id (del: its
// removal): the transaction's batch writes the index records of all its
// group commands together, in key order (txBatch.QueueOrdered). A
// command that delivers or acknowledges n entries writes n PEL records
// by ID, adjacent; the index records of a whole group commit follow in
// one run. Written with each pair, every record landed far from the one
// before, and each memtable insert paid the skiplist's full descent: a
// quarter of the event loop's time under bench/groupbench.
func (g *groupOp) queueOwner(owner []byte, id ID, del bool) {
	g.key = storage.AppendPELConsumerKey(g.key[:0], g.s.db, g.s.key, g.s.meta.Version, g.name, owner, id.Ms, id.Seq)
	g.tx.b.QueueOrdered(g.key, del)
}

// flush writes the group record and the consumer records that changed,
// and stages them for the group cache. Both are rewritten by nearly every
// group command, so they reach the batch once per group commit, with
// their last value (txbatch.go).
func (g *groupOp) flush() error {
	if g.tx.b == nil {
		return ErrReadOnlyTx
	}
	if g.dirty {
		g.key = append(g.key[:0], g.gkey...)
		g.val = g.rec.appendBinary(g.val[:0])
		g.tx.b.SetDeferred(g.key, g.val)
	}
	if g.dirty || g.pelLearned {
		g.tx.stageGroup(g)
		g.dirty, g.pelLearned = false, false
	}
	for _, c := range g.consumers {
		if !c.dirty {
			continue
		}
		g.key = storage.AppendConsumerKey(g.key[:0], g.s.db, g.s.key, g.s.meta.Version, g.name, c.name)
		g.val = c.rec.appendBinary(g.val[:0])
		g.tx.b.SetDeferred(g.key, g.val)
		g.tx.stageConsumer(g, c)
		c.dirty = false
	}
	return nil
}

// groupNames lists the stream's groups in byte order (Redis's rax order).
func (tx *Tx) groupNames(s *streamRef) ([][]byte, []groupRec, error) {
	lower, upper := storage.KindBounds(s.db, s.key, s.meta.Version, storage.KindGroup)
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return nil, nil, err
	}
	type row struct {
		name []byte
		rec  groupRec
	}
	var rows []row
	for ok := it.First(); ok; ok = it.Next() {
		name, err := storage.DecodeGroupKey(it.Key())
		if err != nil {
			it.Close()
			return nil, nil, err
		}
		rec, err := decodeGroupRec(it.Value())
		if err != nil {
			it.Close()
			return nil, nil, err
		}
		rows = append(rows, row{append([]byte(nil), name...), rec})
	}
	if err := it.Close(); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(rows, func(a, b row) int { return bytes.Compare(a.name, b.name) })
	names := make([][]byte, len(rows))
	recs := make([]groupRec, len(rows))
	for i, r := range rows {
		names[i], recs[i] = r.name, r.rec
	}
	return names, recs, nil
}

// consumerList lists the group's consumers in byte order of name.
func (g *groupOp) consumerList() ([]*consumerState, error) {
	lower, upper := storage.ConsumerBounds(g.s.db, g.s.key, g.s.meta.Version, g.name)
	it, err := g.tx.r.NewIter(lower, upper)
	if err != nil {
		return nil, err
	}
	var out []*consumerState
	for ok := it.First(); ok; ok = it.Next() {
		_, name, err := storage.DecodeConsumerKey(it.Key())
		if err != nil {
			it.Close()
			return nil, err
		}
		rec, err := decodeConsumerRec(it.Value())
		if err != nil {
			it.Close()
			return nil, err
		}
		out = append(out, &consumerState{name: append([]byte(nil), name...), rec: rec})
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *consumerState) int { return bytes.Compare(a.name, b.name) })
	return out, nil
}
