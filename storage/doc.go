// Package storage owns Eddy's on-disk state: a Pebble database, the byte
// layout of every key and value stored in it, the journal (the
// write-ahead log, journal.go), and the durability policy (appendfsync)
// applied when a batch commits.
//
// Usage: Open a DB, build a Batch (reads through a Batch see its own
// writes), Commit it. Commit applies the batch and then, depending on the
// sync mode, waits for the journal to reach the disk; concurrent committers
// share one sync (group commit), which waits briefly for the writers it
// expects back (syncer, in db.go). A caller that holds its writers'
// acknowledgements itself (the event loop) applies without waiting and
// calls SyncApplied, which covers every batch Applied counted before it.
// The journal is written and synced on the goroutine that syncs, and
// with appendfsync always its writes are raw system calls, and its syncs
// too unless goroutines wait for a scheduler slot (logfs_linux.go).
// A batch can be rolled back to a Mark,
// so that one batch can carry several writers' work. A stream's new
// entries go in with SetAppend, which keeps all but a transaction's first
// few out of the batch's index until something reads or writes where
// they lie (batch.go). An IterCache
// (itercache.go) lends one goroutine the same iterator over the committed
// state for as long as no batch is applied: every batch goes through
// DB.apply, which counts them.
//
// Invariants:
//   - keys.go is the only place that builds or parses keys; no other
//     package assembles key bytes by hand.
//   - The store's format version is checked before the store is opened for
//     writing; a store of an unknown format is refused and never rewritten.
//   - Every write is one Batch: a command (or a MULTI/EXEC, or a group
//     commit) is atomic on disk.
//   - Every batch goes through DB.apply, which gives it its journal index
//     and journals it; a batch is applied to Pebble at most once, even
//     across crashes (journal.go).
//
// Lock order: journal.applyMu before journal.bufMu; journal.fileMu
// before journal.bufMu and journal.segMu. Pebble's FlushEnd, which holds
// Pebble's mutex, takes only segMu.
package storage
