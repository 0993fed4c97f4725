// Package stream is Eddy's keyspace engine: Redis streams (IDs, entries,
// trimming, consumer groups) and the keyspace around them
// (strings, expiry, DEL/RENAME/SCAN), stored through package storage. It
// knows nothing of RESP: the server parses commands into the argument
// types here and maps the sentinel errors here to Redis's texts.
//
// Usage: Open an Engine on a storage.DB; run reads in View and writes in
// Update. An Update is atomic on disk, so a command, or a whole
// MULTI/EXEC, is; Options.OnCommit then reports the keys it changed (to
// wake blocked readers and invalidate WATCH). Concurrent Updates are
// committed in groups, one batch and one sync per group (commit.go); a
// function that runs several commands in one Update undoes a failed one
// alone with Tx.Savepoint and Tx.RollbackTo.
//
// For the NATS bridge the engine numbers entries (the sequence view,
// seqread.go), indexes them by their field "subject" (subjectindex.go)
// and counts the bytes of the messages they map to (msgsize.go), all
// kept in the batch of every write; what a subject filter matches and how
// a message is rendered are the bridge's (SubjectFilter, bridge/).
//
// Invariants:
//   - Readers reach data only through a key's metadata record, which names
//     the live version; data of older versions is never read.
//   - A stream's metadata (length, last ID, entries added, node count) is
//     written in the same batch as the entries it counts, so it never
//     drifts.
//   - Metadata records are written only by putMeta and deleted only by
//     dropKey (or wholesale by FlushDB/FlushAll), which keep the expiry
//     index, the scan index and the key counts exact in the same batch
//     (keyindex.go).
//   - The metadata cache (metacache.go) holds committed state only: a
//     write transaction stages its metadata changes and Update publishes
//     them after the batch applied, under Engine.mu held exclusively.
//   - A group commit is one transaction: each function in it sees the
//     writes of those before it, and one that fails is rolled back to its
//     savepoint (batch, changes, staged metadata, key counts, versions),
//     so a group commits exactly what its successful functions did.
//   - Entries are read only through records.go's view of entry records
//     (eachEntry, findEntry, appendRecordEntries), since in a packed
//     stream one record holds several entries, keyed before some of them.
//   - The node model (node.go) mirrors Redis's listpack nodes exactly, so
//     "~" trimming removes the same entries and XINFO reports the same
//     radix-tree figures as Redis 7.0.
//
// Lock order: Engine.mu, then metaCache.mu (readers only), then
// storage's own locks. Engine.qmu (the commit queue) is held alone.
// Update's caller must hold no lock that OnCommit takes: the leader of a
// group calls OnCommit for every function in it while their callers wait.
package stream
