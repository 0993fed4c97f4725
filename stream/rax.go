package stream

import "encoding/binary"

// Redis keeps a stream's nodes in a rax (radix tree) keyed by the master
// ID as 16 big-endian bytes, and XINFO STREAM reports its node count as
// radix-tree-nodes. Rax nodes are: the head, one node per key (keys are all
// 16 bytes, so every key ends in a childless leaf), one node per branching
// point, and one node per maximal run of single-child steps (a "compressed"
// node, or a one-child plain node when the run is one byte long).
//
// rax.c builds exactly that shape when keys arrive in ascending order, and
// its removal code merges the runs a removal leaves behind, so after any mix
// of appends, XDEL-emptied nodes and trims the count equals that of a rax
// freshly built from the remaining keys (checked by the tests against a
// step-by-step model of rax.c and against redis-server). The count is
// therefore a function of the key set alone, computed here without
// building a tree.

// RaxKey is the rax key Redis files a node under: the master ID as two
// big-endian uint64s, so byte order is ID order.
func RaxKey(id ID) [16]byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:8], id.Ms)
	binary.BigEndian.PutUint64(k[8:], id.Seq)
	return k
}

// RaxNodes returns the numnodes Redis's rax reports for a rax holding keys,
// which must be strictly ascending. An empty rax still has its head node.
func RaxNodes(keys [][16]byte) uint64 {
	if len(keys) == 0 {
		return 1
	}
	return raxSubtreeNodes(keys, 0)
}

// raxSubtreeNodes counts the nodes of the subtree whose root sits after the
// first depth bytes, which all keys share.
func raxSubtreeNodes(keys [][16]byte, depth int) uint64 {
	if depth == len(keys[0]) {
		return 1 // the leaf holding the key
	}
	// Sorted keys: the common prefix of all is that of the first and last.
	first, last := &keys[0], &keys[len(keys)-1]
	end := depth
	for end < len(first) && first[end] == last[end] {
		end++
	}
	if end > depth {
		// One node holds the whole single-child run.
		return 1 + raxSubtreeNodes(keys, end)
	}
	n := uint64(1) // the branching node, one edge per distinct byte
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j][depth] == keys[i][depth] {
			j++
		}
		n += raxSubtreeNodes(keys[i:j], depth+1)
		i = j
	}
	return n
}
