package stream

import (
	"errors"

	"github.com/eddy-streams/eddy/storage"
)

// Consumer groups, as Redis 7.0 keeps them, stored under the stream's
// key version (layout in storage/keys.go):
//
//   - a group record per group: last-delivered-id, entries-read, and the
//     counts of its consumers and pending entries;
//   - a consumer record per consumer: seen-time and its pending count;
//   - the PEL twice: by entry ID (owner, delivery time, delivery count)
//     and by owner then ID (an index with an empty value).
//
// Counts are changed in the same batch as the records they count, so a
// group's pending count always equals the size of its PEL and each
// consumer's the size of its part. Everything lives under the stream's
// version, so DEL, overwrite and RENAME carry or drop the groups with the
// entries.
//
// Names are length-prefixed in keys, which orders them by length first;
// Redis lists groups and consumers in byte order (its rax), so listings
// are sorted in memory before they are returned.

// Errors of consumer-group commands. The server maps each to Redis's text,
// which depends on the command (see the doc of each method).
var (
	// ErrNoGroup: the consumer group does not exist (for commands that
	// report a missing key the same way, the key may be missing too).
	ErrNoGroup = errors.New("stream: no such consumer group")
	// ErrGroupExists: XGROUP CREATE of a group that exists (BUSYGROUP).
	ErrGroupExists = errors.New("stream: consumer group name already exists")
)

// EntriesReadUnknown is the entries-read value meaning "not known"
// (Redis's SCG_INVALID_ENTRIES_READ): XGROUP CREATE/SETID without
// ENTRIESREAD, and XINFO reports it as nil.
const EntriesReadUnknown int64 = -1

// ReadGroupArgs are the per-command options of XREADGROUP.
type ReadGroupArgs struct {
	Group, Consumer []byte
	// Count bounds the entries returned per key; <= 0 means no limit.
	Count int64
	// NoAck delivers new entries without adding them to the PEL.
	NoAck bool
	// Woken selects the rule Redis 7.0 uses when it serves a client that
	// was blocked on ">" (serveClientsBlockedOnStreamKey): serve as soon
	// as the stream's last generated ID is past the group's
	// last-delivered-id, even when the entries in between were deleted
	// (the reply is then an empty array for the key). Without it the
	// synchronous rule applies: serve only when the last live entry is
	// past the group's last-delivered-id.
	Woken bool
}

// ReadGroupResult is what XREADGROUP reports for one key.
type ReadGroupResult struct {
	// Served is false when there is nothing to reply for this key: ">"
	// with no new entry. The server then leaves the key out of the reply
	// (and blocks, or replies nil, if no key was served).
	Served bool
	// Entries in ID order. Reading history (an explicit ID), an entry
	// that was deleted from the stream but is still pending comes back
	// with Fields == nil: Redis replies its ID and a nil array.
	Entries []Entry
}

// PendingSummary is XPENDING key group.
type PendingSummary struct {
	Count int64
	// First and Last are the smallest and greatest pending IDs; meaningful
	// only when Count > 0 (Redis replies nil, nil, nil otherwise).
	First, Last ID
	// Consumers with at least one pending entry, in byte order of name.
	Consumers []ConsumerPending
}

// ConsumerPending is one line of XPENDING's summary.
type ConsumerPending struct {
	Name    []byte
	Pending int64
}

// PendingRangeArgs are the arguments of extended XPENDING.
type PendingRangeArgs struct {
	// Start and End are inclusive; the server has already applied "("
	// exclusivity (and its errors).
	Start, End ID
	// Count bounds the reply; <= 0 gives an empty reply, as in Redis.
	Count int64
	// Consumer restricts the range to one consumer's PEL when
	// HasConsumer; a consumer that does not exist gives an empty reply.
	Consumer    []byte
	HasConsumer bool
	// MinIdle skips entries delivered less than MinIdle ms ago; 0 (or
	// less) disables the filter.
	MinIdle int64
}

// PendingEntry is one PEL entry.
type PendingEntry struct {
	ID       ID
	Consumer []byte // owner
	// DeliveryTime is the unix ms of the last delivery (XINFO STREAM
	// FULL reports it as is).
	DeliveryTime int64
	// Idle is ms since the last delivery, never negative (XPENDING).
	Idle int64
	// Deliveries is the delivery count. Redis keeps it as uint64 and
	// replies it as a signed integer, so a huge RETRYCOUNT wraps there
	// too: reply int64(Deliveries).
	Deliveries uint64
}

// ClaimArgs are the arguments of XCLAIM.
type ClaimArgs struct {
	// MinIdle: only entries idle at least this long are claimed (< 0 is
	// treated as 0).
	MinIdle int64
	// IDs to claim, in the order given; duplicates are claimed (and
	// replied) again, as in Redis.
	IDs []ID
	// Idle (IDLE ms) or Time (TIME unix-ms) sets the new delivery time;
	// at most one is set: the server keeps the one given last, as Redis
	// does. A time in the future or negative becomes now.
	Idle, Time *int64
	// RetryCount sets the delivery count; nil (or negative, which Redis
	// treats as not given) increments it unless JustID.
	RetryCount *int64
	// Force creates PEL entries for IDs that exist in the stream but are
	// pending nowhere.
	Force bool
	// JustID returns only IDs and does not increment delivery counts.
	JustID bool
	// LastID raises the group's last-delivered-id to it when greater.
	LastID *ID
}

// AutoClaimArgs are the arguments of XAUTOCLAIM.
type AutoClaimArgs struct {
	MinIdle int64 // < 0 is treated as 0
	Start   ID    // inclusive; the server has applied "(" exclusivity
	Count   int64 // >= 1 (the server checks the range); default 100
	JustID  bool
}

// AutoClaimResult is XAUTOCLAIM's reply.
type AutoClaimResult struct {
	// Next is the cursor for the next call: the first PEL ID after the
	// last one examined, or 0-0 when the scan reached the end.
	Next ID
	// Claimed entries (Fields nil with JustID).
	Claimed []Entry
	// Deleted lists pending IDs whose entries were no longer in the
	// stream; they were removed from the PEL.
	Deleted []ID
}

// GroupInfo is one group in XINFO GROUPS.
type GroupInfo struct {
	Name          []byte
	Consumers     int64
	Pending       int64
	LastDelivered ID
	// EntriesRead is nil when unknown.
	EntriesRead *int64
	// Lag is nil when Redis cannot tell it.
	Lag *int64
}

// ConsumerInfo is one consumer in XINFO CONSUMERS.
type ConsumerInfo struct {
	Name    []byte
	Pending int64
	// Idle is ms since the consumer was last seen, never negative.
	Idle int64
	// SeenTime is the unix ms it was last seen (XINFO STREAM FULL).
	SeenTime int64
}

// GroupFull is one group in XINFO STREAM FULL.
type GroupFull struct {
	GroupInfo
	// PEL holds the group's first COUNT pending entries (Idle unset).
	PEL []PendingEntry
	// Consumers in byte order of name.
	Consumers []ConsumerFull
}

// ConsumerFull is one consumer in XINFO STREAM FULL.
type ConsumerFull struct {
	Name     []byte
	SeenTime int64
	Pending  int64 // pel-count
	// PEL holds the consumer's first COUNT pending entries (Consumer and
	// Idle unset).
	PEL []PendingEntry
}

// CheckGroup reports whether group exists on the stream at key: nil, or
// ErrNoSuchKey (no key), ErrWrongType, ErrNoGroup. XREADGROUP checks
// every key with it before serving any (Redis replies NOGROUP for a
// missing key or group before it reads anything), and a blocked
// XREADGROUP checks it when woken: Redis 7.0 answers a key that is gone
// or no longer a stream with "-UNBLOCKED the stream key no longer
// exists" and a destroyed group with "-NOGROUP the consumer group this
// client was blocked on no longer exists".
func (tx *Tx) CheckGroup(db int, key, group []byte) error {
	s, ok, err := tx.loadStream(db, key)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNoSuchKey
	}
	_, ok, err = tx.openGroup(s, group)
	if err == nil && !ok {
		err = ErrNoGroup
	}
	return err
}

// XGroupCreate creates group with last-delivered-id id, or the stream's
// last ID when dollar (0-0 for a stream MKSTREAM creates). entriesRead is
// ENTRIESREAD, EntriesReadUnknown when not given; Redis 7.0 stores it
// as given, even beyond entries-added. A missing key is ErrNoSuchKey
// unless mkstream, which creates an empty stream; an existing group is
// ErrGroupExists.
//
// Only the stream's creation counts as a change of the key (WATCH): Redis
// signals no modified key for group commands.
func (tx *Tx) XGroupCreate(db int, key, group []byte, id ID, dollar, mkstream bool, entriesRead int64) error {
	if tx.b == nil {
		return ErrReadOnlyTx
	}
	s, ok, err := tx.loadStream(db, key)
	if err != nil {
		return err
	}
	if !ok {
		if !mkstream {
			return ErrNoSuchKey
		}
		if s, err = tx.createStream(db, key); err != nil {
			return err
		}
		tx.note(Written, db, key)
	} else if _, exists, err := tx.openGroup(s, group); err != nil {
		return err
	} else if exists {
		return ErrGroupExists
	}
	if dollar {
		id = s.sm.Last
	}
	g := &groupOp{tx: tx, s: s, name: group, gkey: string(s.groupKey(group)),
		rec: groupRec{LastID: id, EntriesRead: max(entriesRead, EntriesReadUnknown)}, pel: pelEmpty, dirty: true}
	if err := g.flush(); err != nil {
		return err
	}
	s.sm.Groups++
	return tx.save(s)
}

// XGroupSetID sets the group's last-delivered-id (the stream's last ID
// when dollar) and its entries-read (EntriesReadUnknown when ENTRIESREAD
// is not given, as Redis does). ErrNoSuchKey, ErrNoGroup.
func (tx *Tx) XGroupSetID(db int, key, group []byte, id ID, dollar bool, entriesRead int64) error {
	g, err := tx.loadGroup(db, key, group)
	if err != nil {
		return err
	}
	if dollar {
		id = g.s.sm.Last
	}
	g.rec.LastID = id
	g.rec.EntriesRead = max(entriesRead, EntriesReadUnknown)
	g.dirty = true
	return g.flush()
}

// XGroupCreateConsumer creates a consumer; false if it existed.
// ErrNoSuchKey, ErrNoGroup.
func (tx *Tx) XGroupCreateConsumer(db int, key, group, consumer []byte) (bool, error) {
	g, err := tx.loadGroup(db, key, group)
	if err != nil {
		return false, err
	}
	before := g.rec.Consumers
	if _, err := g.consumer(consumer, true); err != nil {
		return false, err
	}
	return g.rec.Consumers > before, g.flush()
}

// XGroupDelConsumer deletes a consumer and its pending entries (from the
// group's PEL too) and returns how many were pending; 0 for a consumer
// that does not exist. ErrNoSuchKey, ErrNoGroup.
func (tx *Tx) XGroupDelConsumer(db int, key, group, consumer []byte) (int64, error) {
	if tx.b == nil {
		return 0, ErrReadOnlyTx
	}
	g, err := tx.loadGroup(db, key, group)
	if err != nil {
		return 0, err
	}
	c, err := g.consumer(consumer, false)
	if err != nil || c == nil {
		return 0, err
	}
	s := g.s
	lower, upper := storage.PELConsumerBounds(s.db, s.key, s.meta.Version, g.name, c.name)
	it, err := tx.r.NewIter(lower, upper)
	if err != nil {
		return 0, err
	}
	var n uint64
	for ok := it.First(); ok; ok = it.Next() {
		ms, seq, err := storage.DecodeIDSuffix(it.Key())
		if err != nil {
			it.Close()
			return 0, err
		}
		if err := g.deleteNack(ID{ms, seq}); err != nil {
			it.Close()
			return 0, err
		}
		n++
	}
	if err := it.Close(); err != nil {
		return 0, err
	}
	if n != c.rec.Pending {
		return 0, storage.ErrCorrupt
	}
	if err := tx.b.DeleteRange(lower, upper); err != nil {
		return 0, err
	}
	if err := tx.b.Delete(g.consumerKey(c.name)); err != nil {
		return 0, err
	}
	tx.stageGone(g.gkey, c.name)
	delete(g.consumers, string(c.name))
	g.rec.Pending -= n
	g.rec.Consumers--
	g.dirty = true
	return int64(n), g.flush()
}

// XGroupDestroy deletes the group, its consumers and its PEL; false if it
// did not exist. ErrNoSuchKey. It notes the key GroupDestroyed, so that
// blocked XREADGROUP clients wake (and get NOGROUP), without touching
// WATCH.
func (tx *Tx) XGroupDestroy(db int, key, group []byte) (bool, error) {
	if tx.b == nil {
		return false, ErrReadOnlyTx
	}
	s, ok, err := tx.loadStream(db, key)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, ErrNoSuchKey
	}
	gk := s.groupKey(group)
	if _, exists, err := tx.openGroup(s, group); err != nil || !exists {
		return false, err
	}
	v := s.meta.Version
	for _, bounds := range [][2][]byte{
		pair(storage.ConsumerBounds(s.db, s.key, v, group)),
		pair(storage.PELBounds(s.db, s.key, v, group)),
		pair(storage.PELOwnersBounds(s.db, s.key, v, group)),
	} {
		if err := tx.b.DeleteRange(bounds[0], bounds[1]); err != nil {
			return false, err
		}
	}
	if err := tx.b.Delete(gk); err != nil {
		return false, err
	}
	tx.stageGone(string(gk), nil)
	s.sm.Groups--
	if err := tx.save(s); err != nil {
		return false, err
	}
	tx.note(GroupDestroyed, db, key)
	return true, nil
}

func pair(lower, upper []byte) [2][]byte { return [2][]byte{lower, upper} }
