package stream

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

func key16(ms, seq uint64) [16]byte { return RaxKey(ID{Ms: ms, Seq: seq}) }

func TestRaxKeyOrder(t *testing.T) {
	ids := []ID{{0, 0}, {0, 1}, {0, 1 << 63}, {1, 0}, {255, 9}, {256, 0}, {1 << 40, 3}, {^uint64(0), ^uint64(0)}}
	for i := 1; i < len(ids); i++ {
		a, b := RaxKey(ids[i-1]), RaxKey(ids[i])
		if bytes.Compare(a[:], b[:]) >= 0 {
			t.Fatalf("RaxKey(%v) >= RaxKey(%v)", ids[i-1], ids[i])
		}
	}
}

func TestRaxNodesTable(t *testing.T) {
	tests := []struct {
		name string
		keys [][16]byte
		want uint64
	}{
		{"empty rax is its head", nil, 1},
		{"one key: compressed head + leaf", [][16]byte{key16(1, 1)}, 2},
		{"differ in last byte", [][16]byte{key16(1, 1), key16(1, 2)}, 4},
		{"differ in first byte", [][16]byte{key16(1, 0), key16(1<<56, 0)}, 5},
		{"differ in byte 14", [][16]byte{key16(1, 0), key16(1, 256)}, 6},
		{"three under one branch", [][16]byte{key16(1, 1), key16(1, 2), key16(1, 3)}, 5},
		// compressed head (14 bytes) -> branch@14 {0: branch@15 {leaf, leaf}, 1: one-byte node -> leaf}
		{"nested branches", [][16]byte{key16(1, 1), key16(1, 2), key16(1, 256)}, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RaxNodes(tc.keys); got != tc.want {
				t.Fatalf("RaxNodes = %d, want %d", got, tc.want)
			}
			if got := buildSimRax(tc.keys).numnodes; got != tc.want {
				t.Fatalf("simulated rax.c = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestRaxRemovalIsCanonical drives the rax.c model through appends and
// removals shaped like a stream's (ascending inserts, head trims, removals
// anywhere) and checks that the incremental count always equals RaxNodes of
// the remaining keys, which is why Eddy needs no incremental rax.
func TestRaxRemovalIsCanonical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		r := newSimRax()
		var keys [][16]byte
		var ms, seq uint64
		for step := 0; step < 300; step++ {
			switch op := rng.IntN(10); {
			case op < 6 || len(keys) == 0:
				ms, seq = nextTestID(rng, ms, seq)
				k := key16(ms, seq)
				r.insert(k[:])
				keys = append(keys, k)
			case op < 8: // trim the head
				n := 1 + rng.IntN(min(len(keys), 4))
				for _, k := range keys[:n] {
					r.remove(k[:])
				}
				keys = keys[n:]
			default: // XDEL emptying some node
				i := rng.IntN(len(keys))
				r.remove(keys[i][:])
				keys = slices.Delete(keys, i, i+1)
			}
			if got, want := r.numnodes, RaxNodes(keys); got != want {
				t.Fatalf("round %d step %d: rax.c model has %d nodes, RaxNodes %d", round, step, got, want)
			}
			if got := r.countNodes(); got != r.numnodes {
				t.Fatalf("model bookkeeping: %d reachable nodes, numnodes %d", got, r.numnodes)
			}
		}
	}
}

// nextTestID returns an ID after (ms, seq) with deltas of every size, so
// keys branch at every byte position.
func nextTestID(rng *rand.Rand, ms, seq uint64) (uint64, uint64) {
	shifts := []uint{0, 0, 0, 4, 8, 12, 16, 24, 33, 40, 48, 56}
	s := shifts[rng.IntN(len(shifts))]
	d := uint64(1) + rng.Uint64N(1<<4)<<s
	if rng.IntN(2) == 0 {
		return ms, seq + d
	}
	return ms + d, rng.Uint64N(3) << shifts[rng.IntN(len(shifts))]
}

// simRax follows rax.c's insert and remove step by step (node splits,
// compression, the upward cleanup and re-compression on removal) and keeps
// numnodes the way rax.c does. It is the oracle for RaxNodes.
type simRax struct {
	head     *simNode
	numnodes uint64
}

type simNode struct {
	key   bool
	compr bool       // data is a run of bytes with one child, else one edge per byte
	data  []byte     // edge bytes
	kids  []*simNode // len 1 when compr, else len(data)
}

func newSimRax() *simRax { return &simRax{head: &simNode{}, numnodes: 1} }

func buildSimRax(keys [][16]byte) *simRax {
	r := newSimRax()
	for _, k := range keys {
		r.insert(k[:])
	}
	return r
}

func (r *simRax) countNodes() uint64 {
	var walk func(n *simNode) uint64
	walk = func(n *simNode) uint64 {
		c := uint64(1)
		for _, k := range n.kids {
			c += walk(k)
		}
		return c
	}
	return walk(r.head)
}

// walk is raxLowWalk: matched bytes, stop node, the link that points at it,
// the split position inside a compressed stop node, and the parents.
func (r *simRax) walk(s []byte) (i int, h *simNode, link **simNode, j int, stack []*simNode) {
	h, link = r.head, &r.head
	for len(h.data) > 0 && i < len(s) {
		idx := 0
		if h.compr {
			for j = 0; j < len(h.data) && i < len(s); j, i = j+1, i+1 {
				if h.data[j] != s[i] {
					break
				}
			}
			if j != len(h.data) {
				break
			}
		} else {
			for j = 0; j < len(h.data); j++ {
				if h.data[j] == s[i] {
					break
				}
			}
			if j == len(h.data) {
				break
			}
			idx = j
			i++
		}
		stack = append(stack, h)
		link = &h.kids[idx]
		h = h.kids[idx]
		j = 0
	}
	if !h.compr {
		j = 0
	}
	return i, h, link, j, stack
}

func (r *simRax) insert(s []byte) {
	i, h, link, j, _ := r.walk(s)
	if i == len(s) && (!h.compr || j == 0) {
		h.key = true
		return
	}
	if h.compr && i != len(s) {
		// Split the compressed node at j (rax.c "ALGO 1").
		next := h.kids[0]
		split := &simNode{data: []byte{h.data[j]}, kids: []*simNode{nil}, key: j == 0 && h.key}
		if j == 0 {
			*link = split
		} else {
			trimmed := &simNode{data: slices.Clone(h.data[:j]), compr: j > 1, key: h.key, kids: []*simNode{split}}
			*link = trimmed
			r.numnodes++
		}
		post := next
		if pl := len(h.data) - j - 1; pl > 0 {
			post = &simNode{data: slices.Clone(h.data[j+1:]), compr: pl > 1, kids: []*simNode{next}}
			r.numnodes++
		}
		split.kids[0] = post
		h = split
	} else if h.compr && i == len(s) {
		// The key ends inside a compressed node ("ALGO 2"); cannot happen
		// with fixed-length keys, kept for completeness.
		post := &simNode{data: slices.Clone(h.data[j:]), compr: len(h.data)-j > 1, key: true, kids: h.kids}
		r.numnodes++
		*link = &simNode{data: slices.Clone(h.data[:j]), compr: j > 1, key: h.key, kids: []*simNode{post}}
		return
	}
	for i < len(s) {
		child := &simNode{}
		if len(h.data) == 0 && len(s)-i > 1 {
			h.compr = true
			h.data = slices.Clone(s[i:])
			h.kids = []*simNode{child}
			i = len(s)
		} else {
			pos := 0
			for pos < len(h.data) && h.data[pos] <= s[i] {
				pos++
			}
			h.data = slices.Insert(h.data, pos, s[i])
			h.kids = slices.Insert(h.kids, pos, child)
			i++
		}
		r.numnodes++
		h = child
	}
	h.key = true
}

func (r *simRax) remove(s []byte) {
	i, h, _, j, stack := r.walk(s)
	if i != len(s) || (h.compr && j != 0) || !h.key {
		return
	}
	h.key = false
	pop := func() *simNode {
		if len(stack) == 0 {
			return nil
		}
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return p
	}
	try := false
	if len(h.data) == 0 {
		var child *simNode
		for h != r.head {
			child = h
			r.numnodes--
			h = pop()
			if h.key || (!h.compr && len(h.data) != 1) {
				break
			}
		}
		if child != nil {
			removeSimChild(h, child)
			if len(h.data) == 1 && !h.key {
				try = true
			}
		}
	} else if len(h.data) == 1 {
		try = true
	}
	if !try {
		return
	}
	// Climb to the topmost node of the single-child run, then merge the run.
	var parent *simNode
	for {
		parent = pop()
		if parent == nil || parent.key || (!parent.compr && len(parent.data) != 1) {
			break
		}
		h = parent
	}
	start := h
	nodes := 1
	for len(h.data) != 0 {
		h = h.kids[len(h.kids)-1]
		if h.key || (!h.compr && len(h.data) != 1) {
			break
		}
		nodes++
	}
	if nodes == 1 {
		return
	}
	merged := &simNode{compr: true}
	r.numnodes++
	h = start
	for len(h.data) != 0 {
		merged.data = append(merged.data, h.data...)
		h = h.kids[len(h.kids)-1]
		r.numnodes--
		if h.key || (!h.compr && len(h.data) != 1) {
			break
		}
	}
	merged.kids = []*simNode{h}
	if parent == nil {
		r.head = merged
		return
	}
	for k, c := range parent.kids {
		if c == start {
			parent.kids[k] = merged
		}
	}
}

func removeSimChild(parent, child *simNode) {
	if parent.compr {
		parent.compr, parent.data, parent.kids = false, nil, nil
		return
	}
	k := slices.Index(parent.kids, child)
	parent.data = slices.Delete(parent.data, k, k+1)
	parent.kids = slices.Delete(parent.kids, k, k+1)
}
