package stream

import (
	"strings"

	"github.com/eddy-streams/eddy/storage"
)

// SCAN cursors
//
// Redis's cursor is a position in its hash table. Eddy's is a position in
// the scan index (storage/keys.go), which holds every key of a database
// ordered by a 63-bit hash of its name: cursor c means "resume at the
// first key whose hash is >= c". Cursor 0 starts an iteration, and a
// reply's cursor is 0 when nothing is left; no key hashes to 0. The top
// bit is always clear, so clients that read the cursor as a signed
// 64-bit integer work too. The cursor depends on nothing but the hash,
// so it survives restarts and failover and costs no memory on the
// server.
//
// A reply stops after about COUNT keys, but never between two keys with
// the same hash: it returns the hash of the first key it did not visit.
// Every hash below the returned cursor has therefore been visited, and a
// key present from the start of an iteration to its end is returned at
// least once, whatever is added or removed meanwhile: Redis's guarantee.
// Keys added during an iteration may or may not be returned. Since keys
// are spread by hash, a reply holds a random sample of the keyspace
// rather than a run of similar names.

// defaultScanCount is Redis's COUNT default.
const defaultScanCount = 10

// Scan returns the keys of db from cursor on, visiting about count keys
// (Redis's default when count <= 0), and the cursor to continue from, 0
// when the iteration is complete. Keys not matching the glob match (nil:
// all) or not of type typ ("": all; compared without case, as Redis does;
// an unknown type matches nothing) are visited but not returned, so a
// reply may be empty while the cursor is not 0. Expired keys are skipped
// and, in a write transaction, deleted, as Redis's SCAN does.
func (tx *Tx) Scan(db int, cursor uint64, match []byte, count int64, typ string) (next uint64, keys [][]byte, err error) {
	if count <= 0 {
		count = defaultScanCount
	}
	all := len(match) == 0 || (len(match) == 1 && match[0] == '*')
	lo, hi := storage.ScanBounds(db, cursor)
	it, err := tx.r.NewIter(lo, hi)
	if err != nil {
		return 0, nil, err
	}
	// lookup may delete an expired key from the batch the iterator
	// reads: a batch iterator does not see writes made after it was
	// created.
	var visited int64
	var last uint64
	for ok := it.First(); ok; ok = it.Next() {
		_, h, key, err := storage.DecodeScanKey(it.Key())
		if err != nil {
			it.Close()
			return 0, nil, err
		}
		if visited >= count && h != last {
			next = h
			break
		}
		visited++
		last = h
		m, live, err := tx.lookup(db, key)
		if err != nil {
			it.Close()
			return 0, nil, err
		}
		if !live || (typ != "" && !strings.EqualFold(typ, typeName(m.Type))) {
			continue
		}
		if all || globMatch(match, key) {
			keys = append(keys, append([]byte(nil), key...))
		}
	}
	if err := it.Close(); err != nil {
		return 0, nil, err
	}
	return next, keys, nil
}

// globMatch reports whether s matches the glob pattern with the rules of
// Redis's stringmatchlen (case-sensitive): '*' any run, '?' any byte,
// '[...]' a set with ranges "a-z" (either order) and '^' negation, '\'
// quoting the next byte. An unterminated set ends the pattern. Range
// bounds compare as signed chars, as Redis built for x86-64 does.
func globMatch(p, s []byte) bool {
	gaveUp := false
	return globMatchFrom(p, s, &gaveUp)
}

// globMatchFrom matches p against s. When a '*' finds no match for the
// rest of the pattern at any later offset, gaveUp is set so that outer
// '*'s stop trying too: a longer match for them could only make the rest
// start later still. This keeps patterns such as "*a*a*a*b" from taking
// exponential time, as Redis does since 7.0.9.
func globMatchFrom(p, s []byte, gaveUp *bool) bool {
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for ; len(s) > 0; s = s[1:] {
				if globMatchFrom(p[1:], s, gaveUp) {
					return true
				}
				if *gaveUp {
					return false
				}
			}
			*gaveUp = true
			return false
		case '?':
			p = p[1:]
		case '[':
			var in bool
			if p, in = matchSet(p[1:], s[0]); !in {
				return false
			}
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
				return false
			}
			p = p[1:]
		}
		s = s[1:]
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
		}
	}
	return len(p) == 0 && len(s) == 0
}

// matchSet matches c against the set whose body p starts just after '['.
// It returns the pattern after the closing ']' (empty when the set is
// unterminated) and whether c is in the set.
func matchSet(p []byte, c byte) (rest []byte, in bool) {
	not := len(p) > 0 && p[0] == '^'
	if not {
		p = p[1:]
	}
	for {
		switch {
		case len(p) >= 2 && p[0] == '\\':
			p = p[1:]
			if p[0] == c {
				in = true
			}
		case len(p) == 0:
			return p, in != not
		case p[0] == ']':
			return p[1:], in != not
		case len(p) >= 3 && p[1] == '-':
			lo, hi := int8(p[0]), int8(p[2])
			if lo > hi {
				lo, hi = hi, lo
			}
			if int8(c) >= lo && int8(c) <= hi {
				in = true
			}
			p = p[2:]
		default:
			if p[0] == c {
				in = true
			}
		}
		p = p[1:]
	}
}
