package tests

import "testing"

// TestDiffReplicationCommands compares the replication commands' replies on
// a primary with no replica, errors included, with Redis's.
func TestDiffReplicationCommands(t *testing.T) {
	t.Parallel()
	newDiffPair(t).run(t, []diffCase{
		{"role wait replicaof on a lone primary", []string{
			"ROLE",
			"XADD s * f v",
			"SET a 1",
			"ROLE",
			"WAIT 0 0",
			"WAIT 1 1",
			"WAIT",
			"WAIT 0",
			"WAIT x 0",
			"WAIT 0 x",
			"WAIT 0 -1",
			"WAIT -1 0",
			"ROLE x",
			"REPLICAOF NO ONE",
			"SLAVEOF NO ONE",
			"REPLICAOF",
			"REPLICAOF NO",
			"REPLICAOF 127.0.0.1 notaport",
			"REPLICAOF 127.0.0.1 -1",
			"REPLICAOF 127.0.0.1 70000",
			"REPLICAOF a b c",
			"ROLE",
		}},
	})
}
