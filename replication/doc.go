// Package replication owns the replication log of committed batches and
// both ends of shipping it: the primary side (Primary), which streams the
// log, or a snapshot and then the log, to replicas, and the replica side
// (Replica), which follows a primary and applies what it ships.
//
// Usage: the server creates one Log and passes Log.AppendBatch as the
// engine's OnApply hook, so that every group commit enters the log in the
// store's order with a monotonic offset. A PSYNC on the RESP port hands
// the connection to Primary.Serve. REPLICAOF host port starts a Replica
// (StartReplica); REPLICAOF NO ONE stops it and starts a new history
// (Log.Shift).
//
// # Offsets and histories
//
// A history is named by a replication id (40 hex digits, as Redis's
// master_replid). Its offset counts the bytes of batch payloads (below)
// since the history began; a batch occupies [off, off+len(payload)). A
// replica applies batches in offset order and records, in the same
// Pebble batch, the history and the offset its data reaches
// (storage.ReplStateKey): after a crash that record is exact, so the
// replica asks for a partial resync from it. A replica whose history is
// not the primary's, or whose offset the primary's log no longer covers
// (the backlog holds repl-backlog-size bytes), gets a full sync.
//
// A promoted replica starts a new history at the old one's end and keeps
// the old one as its previous history (Redis 7's master_replid2; INFO's
// second_repl_offset is that end + 1, Redis's convention), with its
// backlog: the two histories agree up to there. A PSYNC of the previous
// history whose offset is at or before its end continues partially, and
// the answer +CONTINUE names the new history, which the replica adopts:
// it records the new id and shifts its own log the same way, dropping its
// own replicas' links so that they adopt it too. The promoted replica
// drops its position record, so that its data is never taken for the old
// history's after it writes. A replica serves PSYNC only while its own
// link is up (-NOMASTERLINK otherwise, as Redis), so that its replicas
// never sync a history it is about to replace.
//
// # The link
//
// The replica connects to the primary's RESP port and sends, as RESP
// commands, each answered before the next:
//
//	AUTH [<masteruser>] <masterauth>         +OK      (only with masterauth set)
//	PING                                     +PONG
//	REPLCONF listening-port <port>           +OK
//	REPLCONF eddy-proto 3 [feature ...]      +OK [feature ...]
//	PSYNC <replid> <offset>                  +CONTINUE <replid>  (the log covers it)
//	                                         +FULLRESYNC <replid> <offset>  (otherwise)
//	PSYNC ? -1                               +FULLRESYNC <replid> <offset>
//
// <offset> is where the replica's data ends (the next byte it needs),
// not Redis's offset+1.
//
// Features: the replica names those it speaks; "batch ack heartbeat" are
// the base, which every peer speaks. "crc" adds checksums to
// every frame. The primary's +OK names the features it agreed to that
// change the wire (today "crc" alone); a primary that predates one names
// nothing, so a peer that does not know a feature never sees it used.
//
// After the +FULLRESYNC or +CONTINUE line the socket carries only frames,
// both ways:
//
//	0      1                     5
//	+------+---------------------+==============================+
//	| type | length: u32 (BE)    | payload: length bytes        |
//	+------+---------------------+==============================+
//
//	type 'R'  primary → replica   snapshot records, any number of:
//	                              klen uvarint | key | vlen uvarint | value
//	type 'E'  primary → replica   end of snapshot: records u64 | offset u64
//	                              (the offset the batches that follow start at)
//	type 'B'  primary → replica   a batch; its payload, which the log stores
//	                              and ships as is:
//	          +-------------+-------------+=========+=======================+
//	          | offset: u64 | n: uvarint  | changes | Pebble batch repr     |
//	          +-------------+-------------+=========+=======================+
//	          change: kind u8 | flags u8 (1: all databases) | db uvarint |
//	                  klen uvarint | key
//	type 'H'  primary → replica   heartbeat: the primary's log end u64
//	type 'A'  replica → primary   ack: the offset the replica applied, u64
//
// Integers are big-endian. A full sync is 'R'* then 'E' then 'B'...; a
// partial resync starts with 'B' frames. The replica acks after each burst
// of frames it applied and after each heartbeat (once a second when
// idle); WAIT counts replicas by their last ack. Frame types are protocol:
// never renumbered or reused; a new one, like any change of the frame
// format, needs a new feature name.
//
// With "crc", CRC-32C (Castagnoli) of the header's first 5 bytes and of
// the payload, each u32 (BE):
//
//	0      1                     5                   9
//	+------+---------------------+-------------------+==================+-------------------+
//	| type | length: u32 (BE)    | crc(type, length) | payload          | crc(payload)      |
//	+------+---------------------+-------------------+==================+-------------------+
//
// The header's own checksum is checked before its length is trusted, so
// a damaged length is never waited for or allocated. A frame whose
// checksum does not match is never applied: the reader drops the link
// and the replica resyncs (partially, from what it applied).
//
// While a replica loads a full sync the engine is locked (stream's
// FullSync): the server answers commands -LOADING meanwhile, as Redis
// does while it loads (ReplicaConfig.Loading).
//
// # Invariants
//
//   - The log holds batches in the order the store applied them: the hook
//     runs under stream.Engine.mu, as does a replica's apply.
//   - A snapshot for a full sync is taken while no group can be built or
//     applied (stream.Engine.Snapshot holds the engine's writer lock), and
//     the log's end is read in the same critical section: the snapshot
//     holds exactly the batches below that offset.
//   - A replica applies one batch as one Pebble batch (data and position
//     together) and reports its changes to OnCommit afterwards, so that
//     blocked XREADs wake.
//
// Lock order: stream.Engine.mu, then Log.mu. Primary.mu and Replica.mu
// are taken alone.
package replication
