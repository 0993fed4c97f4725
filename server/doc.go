// Package server is Eddy's RESP front end: it accepts Redis clients,
// parses their requests, and runs them against a stream.Engine with Redis
// 7.0's replies, byte for byte.
//
// On Linux one epoll event loop serves every client (loop_linux.go), as
// Redis does: each turn reads the ready sockets, runs the writes of every
// client that sent only writes in one Engine.Update, runs the other
// commands one by one and writes the replies. With event-loop no (and
// elsewhere) tidwall/redcon serves each client from a goroutine of its
// own. Both call serveRESP through redcon.Conn, so the code below sees no
// difference.
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
// Requests pass through a guardConn (resp.go) that enforces Redis's
// protocol limits before redcon parses them; its buffers live as long as
// the connection. In the event loop the guard also notes where each
// argument lies as it frames the bytes, and the loop takes the commands
// from those notes (takeCommands) instead of parsing them again; the
// loop's reads share one iterator while nothing is written
// (stream.ReadCache). When a pipeline's first commands are writes, serveRESP
// takes the commands redcon has already parsed and runs each run of
// consecutive writes in one Engine.Update (pipeline.go), with the replies
// and effects of running them one by one. The per-command path (lookup,
// context, write closure, reply buffer) allocates nothing.
//
// A client whose command blocks (XREAD BLOCK, and WAIT, woken by the
// replicas' acknowledgements) stays in the event loop, parked until it is
// woken or its timeout passes (loop_linux.go); served by redcon, it
// leaves redcon's loop (blocking.go): from then on one goroutine reads
// its requests into a queue, so a disconnect is seen while it waits, and
// its own goroutine runs them in order (after the rest of a pipeline
// already read). PSYNC makes the client leave the event loop.
//
// Durability is the store's decision, not the server's: an Update returns
// once its writes are as durable as appendfsync asks, and the event loop,
// which applies a turn's writes with UpdateApplied, holds their replies
// while the engine says replies wait for a sync (RepliesWaitForSync) until
// the engine's Durable position covers them (eventLoop.hold); a large
// group's sync runs while the loop goes on (loop_linux.go).
//
// Invariants and lock order:
//   - gate (shared per command, exclusive at shutdown) before commitMu
//     (shared per write, exclusive for an EXEC with watched keys) before
//     the engine's lock. OnCommit runs with commitMu held shared and takes
//     watchRegistry.mu and blockRegistry.mu, never the reverse.
//   - blockRegistry.mu before client.mu, and before eventLoop.wokenMu
//     before eventLoop.wakeMu (a wake-up handed to the loop); Server.mu
//     before nothing.
//   - Handlers never call the Engine directly; they use ctx.tx, so EXEC
//     can run them all inside its single Update.
package server
