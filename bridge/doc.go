// Package bridge serves Eddy's streams to NATS clients as JetStream
// would: Direct Get, STREAM.MSG.GET, STREAM.INFO, STREAM.NAMES/LIST and
// $JS.API.INFO, read from a Store (EngineStore over a *stream.Engine).
//
// Usage: Start(ctx, Config{Port: 4222}, EngineStore{Engine: eng})
// starts an embedded nats-server (no JetStream) and subscribes; with
// Config.URL it joins an existing NATS under Config.Domain instead.
// Close stops reading the store before it returns.
//
// The bridge speaks the NATS protocol itself (conn.go) so that replies
// carry nats-server's exact status lines and header order; the JSON
// bodies use nats-server's own API types. Every status line is in
// status.go. All subscriptions join one queue group, so several Eddy
// nodes on one NATS answer each request once.
//
// Invariants: a request with a reply subject always gets exactly one
// reply (a status, a JSON error, or the message), except while the
// connection is down or the bridge is closing. Lock order: Bridge.stopMu
// before conn.wmu.
package bridge
