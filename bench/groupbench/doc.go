// Command groupbench measures consumer-group loads that redis-benchmark
// cannot express, on Eddy and on a real redis-server side by side; bench.sh
// starts both servers and runs it after the redis-benchmark loads.
//
// Two loads:
//
//   - Throughput: clients connections (50), each its own consumer, loop
//     XREADGROUP GROUP g c<i> COUNT 10 STREAMS s > then XACK s g <those
//     IDs>, for a fixed time or until the group has read the whole stream.
//     Reported: entries acked per second, commands per second, p50/p99 of
//     the read+ack pair. Each round uses a fresh group on the same
//     pre-filled stream.
//   - PEL cost: groups whose PELs hold each of -pel entries (read, never
//     acked), then single-connection latency of XPENDING key group (the
//     summary) and of XAUTOCLAIM key group c 0 <cursor> COUNT 10 walking
//     the cursor. Comparing the sizes shows whether a call is O(PEL).
//
// Rounds alternate between the servers (and which goes first); each figure
// is the median over rounds of that round's rate or percentile. Results
// are printed as a table and written as JSON for bench.sh to merge.
//
// For work on one server: -pelcost=false runs the throughput load alone
// (say, while a CPU profile of the server is taken), and -nofill reuses
// the stream an earlier run filled, under group names of the run's own.
// Any two servers may stand in for "redis" and "eddy": two Eddy builds
// side by side give the ratio of one build to the other.
//
// The load loops allocate nothing per call (see resp.go), so the client's
// share of the two cores stays small and equal for both servers.
package main
