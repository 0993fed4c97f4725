// Package bridge will own Eddy's NATS side: it serves streams to NATS
// clients as JetStream would, starting with JetStream Direct Get (fetch one
// message by sequence or by subject), and maps stream errors to NATS status
// lines from one table.
package bridge
