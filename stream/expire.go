package stream

import "github.com/eddy-streams/eddy/storage"

// Expiry is lazy and active, as in Redis. Lazy: tx.lookup treats a key
// whose time has come as missing and, in a write transaction, deletes it.
// Active: ExpireCycle walks the expiry index (ordered by time) and deletes
// what is due. The index holds one entry per key with a TTL; putMeta and
// dropKey keep it exact, so every write here goes through them.

// ExpireCond is the condition option of EXPIRE and its relatives (Redis
// 7.0).
type ExpireCond uint8

// Expire conditions.
const (
	// ExpireAlways sets the expiry unconditionally.
	ExpireAlways ExpireCond = iota
	// ExpireNX sets it only when the key has no expiry.
	ExpireNX
	// ExpireXX sets it only when the key has an expiry.
	ExpireXX
	// ExpireGT sets it only when it is later than the current one (no
	// expiry counts as infinitely late, so GT never applies to it).
	ExpireGT
	// ExpireLT sets it only when it is earlier than the current one (no
	// expiry counts as infinitely late, so LT always applies to it).
	ExpireLT
)

// Expire makes key expire at unix milliseconds atMs, if cond allows; it
// reports whether it did (false for a missing key). A time not in the
// future deletes the key at once, as Redis does; the condition is checked
// first.
func (tx *Tx) Expire(db int, key []byte, atMs int64, cond ExpireCond) (bool, error) {
	m, ok, err := tx.lookup(db, key)
	if err != nil || !ok {
		return false, err
	}
	cur := m.ExpireAt
	switch cond {
	case ExpireNX:
		ok = cur == 0
	case ExpireXX:
		ok = cur != 0
	case ExpireGT:
		ok = cur != 0 && atMs > cur
	case ExpireLT:
		ok = cur == 0 || atMs < cur
	}
	if !ok {
		return false, nil
	}
	if atMs <= tx.now {
		if err := tx.dropKey(db, key, &m); err != nil {
			return false, err
		}
		tx.note(Deleted, db, key)
		return true, nil
	}
	nm := m
	nm.ExpireAt = atMs
	if err := tx.putMeta(db, key, &nm, &m); err != nil {
		return false, err
	}
	tx.note(Written, db, key)
	return true, nil
}

// PTTL returns the milliseconds key has left: -2 for a missing key, -1
// for a key without expiry.
func (tx *Tx) PTTL(db int, key []byte) (int64, error) {
	at, err := tx.ExpireTime(db, key)
	if err != nil || at < 0 {
		return at, err
	}
	return max(at-tx.now, 0), nil
}

// ExpireTime returns when key expires, in unix milliseconds: -2 for a
// missing key, -1 for a key without expiry.
func (tx *Tx) ExpireTime(db int, key []byte) (int64, error) {
	m, ok, err := tx.lookup(db, key)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return -2, nil
	case m.ExpireAt == 0:
		return -1, nil
	}
	return m.ExpireAt, nil
}

// Persist removes key's expiry and reports whether it had one.
func (tx *Tx) Persist(db int, key []byte) (bool, error) {
	m, ok, err := tx.lookup(db, key)
	if err != nil || !ok || m.ExpireAt == 0 {
		return false, err
	}
	nm := m
	nm.ExpireAt = 0
	if err := tx.putMeta(db, key, &nm, &m); err != nil {
		return false, err
	}
	tx.note(Written, db, key)
	return true, nil
}

// ExpireCycle is one round of active expiry: in one Update it deletes up
// to limit keys (none when limit <= 0) whose expiry time has come, oldest
// first, and returns how many it deleted. Each deletion is noted as
// Deleted. An index entry that no longer matches its key's metadata (it
// should not happen; the index is kept exact) is removed without counting.
func (e *Engine) ExpireCycle(limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	n := 0
	err := e.Update(func(tx *Tx) error {
		n = 0
		// Collect first: the deletions below go into the batch the
		// iterator reads.
		lo, hi := storage.ExpiryBounds(tx.now)
		it, err := tx.r.NewIter(lo, hi)
		if err != nil {
			return err
		}
		var due [][]byte
		for ok := it.First(); ok && len(due) < limit; ok = it.Next() {
			due = append(due, append([]byte(nil), it.Key()...))
		}
		if err := it.Close(); err != nil {
			return err
		}
		for _, ek := range due {
			at, db, key, err := storage.DecodeExpiryKey(ek)
			if err != nil {
				return err
			}
			v, ok, err := tx.r.Get(storage.AppendMetaKey(nil, db, key))
			if err != nil {
				return err
			}
			var m storage.Meta
			if ok {
				if m, err = storage.DecodeMeta(v); err != nil {
					return err
				}
			}
			if !ok || m.ExpireAt != at {
				if err := tx.b.Delete(ek); err != nil {
					return err
				}
				continue
			}
			if err := tx.dropKey(db, key, &m); err != nil {
				return err
			}
			tx.note(Deleted, db, key)
			n++
		}
		return nil
	})
	return n, err
}
