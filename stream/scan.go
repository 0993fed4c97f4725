package stream

import (
	"encoding/binary"
	"strings"

	"github.com/eddy-streams/eddy/storage"
)

// SCAN cursors
//
// Redis's cursor is a position in its hash table; Eddy's keys sit in
// Pebble in storage order (by name length, then bytes), so the cursor is
// a position in that order, derived from the key where the next call
// resumes and nothing else. A stateless cursor survives restarts and
// failover, costs no memory and cannot be evicted, unlike a table of
// cursor id → last key (which would also need state on the Engine).
//
// 64 bits cannot name every key exactly, so a cursor names a lower bound:
//
//	length 1..126:  | len:u8 | first 7 bytes of the key, zero padded |
//	length >= 127:  | 127:u8 | len:u32 | first 3 bytes               |
//
// The top bit is always clear, so clients that parse the cursor as a
// signed 64-bit integer work too. The encoding is monotone in storage
// order, and seekKey(c) is the smallest possible key whose cursor is c.
// Scan never stops between two keys with the same cursor: after COUNT
// keys it goes on while the next key encodes like the last one visited,
// and returns the next key's cursor (never 0: only the empty key encodes
// to 0, and it sorts first). Hence every key whose cursor is below the
// one returned, and that existed throughout, has been returned: Redis's
// guarantee. The price is that keys of one length sharing their first 7
// bytes come back in one reply, however many there are.

const (
	cursorLongLen  = 127 // first byte of the cursor of a key of 127 bytes or more
	cursorShortPre = 7   // key bytes in the cursor of a shorter key
	cursorLongPre  = 3   // key bytes in the cursor of a longer key
)

// defaultScanCount is Redis's COUNT default.
const defaultScanCount = 10

func encodeCursor(key []byte) uint64 {
	var b [8]byte
	if len(key) < cursorLongLen {
		b[0] = byte(len(key))
		copy(b[1:], key)
	} else {
		b[0] = cursorLongLen
		binary.BigEndian.PutUint32(b[1:], uint32(len(key)))
		copy(b[5:], key)
	}
	return binary.BigEndian.Uint64(b[:])
}

// seekKey returns the smallest metadata key of db whose cursor is c. Any
// number is accepted: a cursor Eddy never returned is just a position.
func seekKey(db int, c uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], c)
	n := uint64(b[0])
	pre := b[1:]
	if b[0] >= cursorLongLen {
		n = uint64(binary.BigEndian.Uint32(b[1:]))
		pre = b[5:]
	}
	if uint64(len(pre)) > n {
		pre = pre[:n]
	}
	// The metadata key is | tag | db | klen:u32 | key | (storage/keys.go);
	// a key of length n that starts with pre sorts no lower than pre
	// with klen set to n. The cursor tests hold this against the codec.
	k := storage.AppendMetaKey(nil, db, pre)
	binary.BigEndian.PutUint32(k[len(k)-len(pre)-4:], uint32(n))
	return k
}

// Scan returns the live keys of db from cursor on, visiting about count
// keys (Redis's default when count <= 0), and the cursor to continue
// from, 0 when the iteration is complete. Keys not matching the glob
// match (nil: all) or not of type typ ("": all; compared without case, as
// Redis does; an unknown type matches nothing) are visited but not
// returned, so a reply may be empty while the cursor is not 0.
func (tx *Tx) Scan(db int, cursor uint64, match []byte, count int64, typ string) (next uint64, keys [][]byte, err error) {
	if count <= 0 {
		count = defaultScanCount
	}
	all := len(match) == 0 || (len(match) == 1 && match[0] == '*')
	var seek []byte
	if cursor != 0 {
		seek = seekKey(db, cursor)
	}
	var visited int64
	var last uint64
	err = tx.eachKey(db, seek, func(key []byte, m *storage.Meta) (bool, error) {
		c := encodeCursor(key)
		if visited >= count && c != last {
			next = c
			return false, nil
		}
		visited++
		last = c
		if typ != "" && !strings.EqualFold(typ, typeName(m.Type)) {
			return true, nil
		}
		if all || globMatch(match, key) {
			keys = append(keys, append([]byte(nil), key...))
		}
		return true, nil
	})
	if err != nil {
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
