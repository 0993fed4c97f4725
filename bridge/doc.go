// Package bridge serves Eddy's streams to NATS clients as JetStream
// would: Direct Get (single messages, batches, multi_last),
// STREAM.MSG.GET, STREAM.INFO, STREAM.NAMES/LIST, $JS.API.INFO, and the
// ephemeral push consumers that nats.go's KV History, Keys and Watch
// create, read from a Store (EngineStore over a *stream.Engine).
//
// Usage: Start(ctx, Config{Port: 4222}, EngineStore{Engine: eng})
// starts an embedded nats-server (no JetStream) and subscribes; with
// Config.URL it joins an existing NATS under Config.Domain instead.
// Appended wakes the consumers of a stream a commit appended to. Close
// stops the consumers and reading the store before it returns.
//
// The bridge speaks the NATS protocol itself (conn.go) so that replies
// carry nats-server's exact status lines and header order; the JSON
// bodies use nats-server's own API types. Every status line, and every
// JetStream API error text the bridge words itself, is in status.go
// (TestStatusLinesInOneFile). All subscriptions join one queue group, so
// several Eddy nodes on one NATS answer each request once. Cheap requests
// (a get by sequence or last subject) are answered on the connection's
// read loop; the rest go to workers.
//
// A consumer's messages must reach the client under their stored subject
// while routed to its deliver subject, which nats-server does only for
// messages arriving over a route or leafnode connection; so they go out
// over a leafnode connection (leaf.go) to the embedded server's leafnode
// listener, or to Config.LeafURL of an external one, whose LS+/LS- say
// which deliver subjects still have subscribers (consumer.go).
//
// Invariants: a request with a reply subject gets exactly one reply (a
// status, a JSON error, the message, or a batch ended by its EOB status),
// except while the connection is down, the bridge is closing, or the
// reply subject is one of the bridge's own API subjects. Lock order:
// Bridge.stopMu before conn.wmu; consumer.mu before leaf.wmu; consumers.mu
// is never held while taking a consumer.mu.
package bridge
