// Package replication will own the log of committed batches and both ends
// of replicating it: the primary side, which streams the log to replicas,
// and the replica side, which applies it in order. The same log wakes
// readers blocked in XREAD/XREADGROUP when the entries they wait for commit.
package replication
