// Package server is Eddy's RESP front end: it accepts Redis clients,
// parses their requests, and runs them against a stream.Engine with Redis
// 7.0's replies, byte for byte.
//
// One event loop serves every client (loop.go), on every system, as
// Redis does: each turn reads the ready sockets, runs the writes of every
// client that sent only writes in one Engine.Update, runs the other
// commands one by one through serveRESP and writes the replies. What
// differs between systems (epoll, kqueue, goroutines reading ahead on
// Windows) is in the package poll, below the loop.
//
// Usage (cmd/eddy wires the parts; the server never sees the store):
//
//	srv, err := server.New(cfg, server.Parts{Engine: eng, ReplLog: log}, logger) // binds the port
//	err = srv.Serve(ctx) // until ctx is cancelled or SHUTDOWN; then the caller closes the store
//
// One table of commands (commandTable) drives everything: dispatch
// (dispatch.go: lookup, arity, auth, MULTI queueing, then the handler in a
// View or an Update), COMMAND INFO/DOCS/LIST and INFO commandstats. A
// handler writes its whole reply, errors included, into the client's
// replyWriter; the dispatcher never half-replies: a commit that fails
// replaces the reply with the error.
//
// Every request is framed once, by the client's guardConn (resp.go),
// which enforces Redis's protocol limits and notes where each argument
// lies as it frames the bytes; the loop takes the commands from those
// notes (takeCommands), and nothing parses them again. Its buffers live
// as long as the connection. The loop's reads share one iterator while
// nothing is written (stream.ReadCache). When a pipeline's first commands
// are writes, serveRESP runs each run of consecutive writes in one
// Engine.Update (pipeline.go), with the replies and effects of running
// them one by one. The per-command path (lookup, context, write closure,
// reply buffer) allocates nothing.
//
// A client whose command blocks (XREAD BLOCK, and WAIT, woken by the
// replicas' acknowledgements) stays in the event loop, parked until it is
// woken or its timeout passes (loop.go, park), with the commands it sent
// behind the blocked one held until then. PSYNC makes the client leave
// the event loop: its connection becomes a replication link served by a
// goroutine of its own.
//
// Durability is the store's decision, not the server's: an Update returns
// once its writes are as durable as appendfsync asks, and the event loop,
// which applies a turn's writes with UpdateApplied, holds their replies
// while the engine says replies wait for a sync (RepliesWaitForSync) until
// the engine's Durable position covers them (eventLoop.hold); a large
// group's sync runs while the loop goes on (loop.go).
//
// Invariants and lock order:
//   - gate (shared per command, exclusive at shutdown) before commitMu
//     (shared per write, exclusive for an EXEC with watched keys) before
//     the engine's lock. OnCommit runs with commitMu held shared and takes
//     watchRegistry.mu and blockRegistry.mu, never the reverse.
//   - blockRegistry.mu before client.mu, and before eventLoop.wokenMu
//     before the poller's own lock (a wake-up handed to the loop);
//     Server.mu before nothing.
//   - Handlers never call the Engine directly; they use ctx.tx, so EXEC
//     can run them all inside its single Update.
package server
