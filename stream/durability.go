package stream

import "github.com/eddy-streams/eddy/storage"

// Durability. The store owns the policy (appendfsync) and the act (the
// journal, its writes and syncs: storage/journal.go). Update returns once
// its writes are as durable as that policy asks, so most callers need
// nothing below. A front end that applies the writes of many clients with
// UpdateApplied and answers them together (the server's event loop) asks
// the store once for all of them instead:
//
//	if e.RepliesWaitForSync() {   // the policy: appendfsync always
//		at := e.Applied()         // every write applied so far
//		...                       // hold the replies
//		err := e.SyncApplied(n)   // one sync for the n writers held
//		// release what at <= e.Durable() covers
//	}
//
// The front end never reads or names the policy itself: what a reply waits
// for is the store's decision.

// ErrStoreFailed is returned, wrapping the cause, by every write once a
// write or sync of the store's journal failed: from then on nothing more
// is made durable, and the store takes no writes until it is reopened.
var ErrStoreFailed = storage.ErrJournalFailed

// SyncModes lists the values appendfsync takes, as SetSyncMode accepts
// them.
func SyncModes() []string { return storage.SyncModeNames() }

// SetSyncMode changes the durability policy to one of SyncModes (CONFIG
// SET appendfsync).
func (e *Engine) SetSyncMode(name string) error {
	mode, err := storage.ParseSyncMode(name)
	if err != nil {
		return err
	}
	e.db.SetSyncMode(mode)
	return nil
}

// RepliesWaitForSync reports whether a write may be acknowledged only
// once a sync of the journal covers it (appendfsync always). When false,
// a write is acknowledged once applied.
func (e *Engine) RepliesWaitForSync() bool { return e.db.AckAfterSync() }

// Applied is the position of the store after every write applied so far
// (a count of batches): a write applied before Applied was read is durable
// once Durable reaches that value.
func (e *Engine) Applied() uint64 { return e.db.Applied() }

// Durable is the position up to which every applied write is on disk,
// whoever asked for the sync that put it there.
func (e *Engine) Durable() uint64 { return e.db.Durable() }

// SyncApplied makes every write applied before the call durable, with
// one journal sync shared with any other waiter. writers is how many
// independent writers the caller answers with it (INFO's
// eddy_sync_writers).
func (e *Engine) SyncApplied(writers int) error { return e.db.SyncApplied(writers) }

// Failed returns the store's failure (ErrStoreFailed), or nil while it
// takes writes.
func (e *Engine) Failed() error { return e.db.Failed() }

// WriteStallStats and SyncStats are what the store reports of its write
// stalls and journal syncs (INFO persistence).
type (
	WriteStallStats = storage.WriteStallStats
	SyncStats       = storage.SyncStats
)

// WriteStalls reports the times the store stopped writes for its
// compactions and flushes to catch up.
func (e *Engine) WriteStalls() WriteStallStats { return e.db.WriteStalls() }

// Syncs reports the journal syncs the store ran for writes.
func (e *Engine) Syncs() SyncStats { return e.db.Syncs() }

// ErrStoreDamaged is returned, wrapping a one-line description (the file
// and the block), by a read that met damaged data in the store's files:
// that read fails, and the rest of the store is served.
var ErrStoreDamaged = storage.ErrDamaged

// DamageStats is what the store's reads met of damaged data (INFO).
type DamageStats = storage.DamageStats

// Damage reports the damaged data the store's reads met since it opened.
func (e *Engine) Damage() DamageStats { return e.db.Damage() }
