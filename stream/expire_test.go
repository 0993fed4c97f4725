package stream

import (
	"fmt"
	"slices"
	"testing"

	"github.com/eddy-streams/eddy/storage"
)

func TestExpireConditions(t *testing.T) {
	const (
		none  = int64(0)
		later = ksT0 + 100_000
		soon  = ksT0 + 10_000
	)
	// Each case: the key's current expiry (-1: the key is missing), the
	// call, and Redis 7.0's answer and resulting expiry (-2: deleted).
	cases := []struct {
		cur     int64
		at      int64
		cond    ExpireCond
		want    bool
		after   int64
		changes []string
	}{
		{none, later, ExpireAlways, true, later, []string{"written 0 k"}},
		{soon, later, ExpireAlways, true, later, []string{"written 0 k"}},
		{soon, soon, ExpireAlways, true, soon, []string{"written 0 k"}},
		{-1, later, ExpireAlways, false, -2, nil},
		{none, later, ExpireNX, true, later, []string{"written 0 k"}},
		{soon, later, ExpireNX, false, soon, nil},
		{none, later, ExpireXX, false, none, nil},
		{soon, later, ExpireXX, true, later, []string{"written 0 k"}},
		{none, later, ExpireGT, false, none, nil}, // no TTL is infinite
		{soon, later, ExpireGT, true, later, []string{"written 0 k"}},
		{later, soon, ExpireGT, false, later, nil},
		{soon, soon, ExpireGT, false, soon, nil},
		{none, later, ExpireLT, true, later, []string{"written 0 k"}},
		{later, soon, ExpireLT, true, soon, []string{"written 0 k"}},
		{soon, later, ExpireLT, false, soon, nil},
		// A time not in the future deletes, once the condition holds.
		{none, ksT0, ExpireAlways, true, -2, []string{"deleted 0 k"}},
		{soon, -5000, ExpireAlways, true, -2, []string{"deleted 0 k"}},
		{none, 0, ExpireXX, false, none, nil},
		{soon, ksT0 - 1, ExpireLT, true, -2, []string{"deleted 0 k"}},
		{soon, ksT0 - 1, ExpireGT, false, soon, nil},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			k := newKS(t)
			if c.cur >= 0 {
				k.set(0, "k", "v", c.cur)
			}
			k.takeChanges()
			k.update(func(tx *Tx) error {
				ok, err := tx.Expire(0, []byte("k"), c.at, c.cond)
				if ok != c.want {
					t.Errorf("Expire = %v; want %v", ok, c.want)
				}
				return err
			})
			var got int64
			k.view(func(tx *Tx) error {
				var err error
				got, err = tx.ExpireTime(0, []byte("k"))
				return err
			})
			want := c.after
			if want == none {
				want = -1
			}
			if got != want {
				t.Errorf("expire time %d; want %d", got, want)
			}
			if ch := k.takeChanges(); !slices.Equal(ch, c.changes) {
				t.Errorf("noted %v; want %v", ch, c.changes)
			}
			k.checkIndex()
		})
	}
}

func TestTTLAndPersist(t *testing.T) {
	k := newKS(t)
	k.set(0, "plain", "v", 0)
	k.set(0, "ttl", "v", ksT0+1500)
	k.stream(0, "st", 1)
	k.update(func(tx *Tx) error {
		_, err := tx.Expire(0, []byte("st"), ksT0+99, ExpireAlways)
		return err
	})
	k.now.Store(ksT0 + 1)
	cases := []struct {
		key        string
		pttl, time int64
	}{
		{"plain", -1, -1}, {"ttl", 1499, ksT0 + 1500}, {"st", 98, ksT0 + 99}, {"missing", -2, -2},
	}
	for _, c := range cases {
		k.view(func(tx *Tx) error {
			p, err := tx.PTTL(0, []byte(c.key))
			if err != nil || p != c.pttl {
				t.Errorf("PTTL %s = %d, %v; want %d", c.key, p, err, c.pttl)
			}
			at, err := tx.ExpireTime(0, []byte(c.key))
			if err != nil || at != c.time {
				t.Errorf("EXPIRETIME %s = %d, %v; want %d", c.key, at, err, c.time)
			}
			return nil
		})
	}
	k.takeChanges()
	persist := []struct {
		key     string
		want    bool
		changes []string
	}{
		{"plain", false, nil}, {"ttl", true, []string{"written 0 ttl"}}, {"ttl", false, nil},
		{"st", true, []string{"written 0 st"}}, {"missing", false, nil},
	}
	for _, p := range persist {
		k.update(func(tx *Tx) error {
			ok, err := tx.Persist(0, []byte(p.key))
			if ok != p.want {
				t.Errorf("PERSIST %s = %v; want %v", p.key, ok, p.want)
			}
			return err
		})
		if ch := k.takeChanges(); !slices.Equal(ch, p.changes) {
			t.Errorf("PERSIST %s noted %v; want %v", p.key, ch, p.changes)
		}
	}
	k.checkIndex()
	// Persisted keys outlive their old time.
	k.now.Store(ksT0 + 10_000)
	if k.describe(0, "ttl") != "v" || k.describe(0, "st") != "stream:1" {
		t.Error("persisted key expired")
	}
}

func TestLazyExpiry(t *testing.T) {
	k := newKS(t)
	k.set(0, "a", "v", ksT0+10)
	k.stream(0, "s", 3)
	k.update(func(tx *Tx) error {
		_, err := tx.Expire(0, []byte("s"), ksT0+10, ExpireAlways)
		return err
	})
	k.now.Store(ksT0 + 10)
	k.takeChanges()
	// A read transaction reports the keys missing; it cannot write, so the
	// View deletes what it met right after, as Redis deletes on access.
	k.view(func(tx *Tx) error {
		for _, key := range []string{"a", "s"} {
			if ok, _ := tx.Exists(0, []byte(key)); ok {
				t.Errorf("%s exists after its time", key)
			}
		}
		// Redis's DBSIZE counts expired keys until they are reclaimed.
		if n, _ := tx.DBSize(0); n != 2 {
			t.Errorf("DBSIZE %d; want 2", n)
		}
		return nil
	})
	for _, key := range []string{"a", "s"} {
		if _, ok := k.meta(0, key); ok {
			t.Fatalf("expired key %s met by a View was not reclaimed", key)
		}
	}
	if ch := k.takeChanges(); !slices.Equal(ch, []string{"deleted 0 a", "deleted 0 s"}) {
		t.Errorf("noted %v", ch)
	}
	k.checkIndex()
	k.checkNoOrphanData()
}

func TestExpireCycle(t *testing.T) {
	k := newKS(t)
	for i := range 10 {
		k.set(i%2, fmt.Sprint("k", i), "v", ksT0+int64(i)*10+5)
	}
	k.set(0, "forever", "v", 0)
	k.stream(1, "st", 4)
	k.update(func(tx *Tx) error {
		_, err := tx.Expire(1, []byte("st"), ksT0+1, ExpireAlways)
		return err
	})
	k.takeChanges()

	steps := []struct {
		now     int64
		limit   int
		want    int
		changes []string
	}{
		{ksT0, 10, 0, nil},
		{ksT0 + 5, 0, 0, nil},
		{ksT0 + 5, 10, 2, []string{"deleted 1 st", "deleted 0 k0"}},
		{ksT0 + 100, 3, 3, []string{"deleted 1 k1", "deleted 0 k2", "deleted 1 k3"}},
		{ksT0 + 90, 100, 5, []string{"deleted 0 k4", "deleted 1 k5", "deleted 0 k6", "deleted 1 k7", "deleted 0 k8"}},
		{ksT0 + 95, 100, 1, []string{"deleted 1 k9"}}, // due exactly now
		{ksT0 + 1e9, 100, 0, nil},
	}
	for i, s := range steps {
		k.now.Store(s.now)
		n, err := k.e.ExpireCycle(s.limit)
		if err != nil || n != s.want {
			t.Fatalf("step %d: ExpireCycle = %d, %v; want %d", i, n, err, s.want)
		}
		if ch := k.takeChanges(); !slices.Equal(ch, s.changes) {
			t.Errorf("step %d noted %v; want %v", i, ch, s.changes)
		}
		k.checkIndex()
	}
	k.checkNoOrphanData()
	if k.describe(0, "forever") != "v" {
		t.Error("key without TTL expired")
	}
}

func TestExpireCycleStaleEntry(t *testing.T) {
	k := newKS(t)
	k.set(0, "a", "v", 0)
	// An index entry with no matching metadata (the index should never
	// hold one) is removed and not counted.
	k.update(func(tx *Tx) error {
		return tx.b.Set(storage.AppendExpiryKey(nil, ksT0-1, 0, []byte("a")), nil)
	})
	n, err := k.e.ExpireCycle(10)
	if err != nil || n != 0 {
		t.Fatalf("ExpireCycle = %d, %v", n, err)
	}
	if k.describe(0, "a") != "v" {
		t.Error("stale entry deleted a live key")
	}
	k.checkIndex()
}

// TestTTLKeptOrCleared follows Redis: SET without KEEPTTL clears the TTL;
// APPEND, INCR, INCRBYFLOAT and SET KEEPTTL keep it.
func TestTTLKeptOrCleared(t *testing.T) {
	const at = ksT0 + 5000
	cases := []struct {
		name string
		op   func(tx *Tx) error
		want int64
	}{
		{"set", func(tx *Tx) error { _, _, _, err := tx.Set(0, []byte("k"), []byte("1"), SetOptions{}); return err }, -1},
		{"set keepttl", func(tx *Tx) error {
			_, _, _, err := tx.Set(0, []byte("k"), []byte("1"), SetOptions{KeepTTL: true})
			return err
		}, at},
		{"set new ttl", func(tx *Tx) error {
			_, _, _, err := tx.Set(0, []byte("k"), []byte("1"), SetOptions{ExpireAt: at + 1})
			return err
		}, at + 1},
		{"set xx", func(tx *Tx) error {
			_, _, _, err := tx.Set(0, []byte("k"), []byte("1"), SetOptions{XX: true})
			return err
		}, -1},
		{"set nx (not done)", func(tx *Tx) error {
			_, _, _, err := tx.Set(0, []byte("k"), []byte("1"), SetOptions{NX: true})
			return err
		}, at},
		{"append", func(tx *Tx) error { _, err := tx.Append(0, []byte("k"), []byte("1")); return err }, at},
		{"incr", func(tx *Tx) error { _, err := tx.IncrBy(0, []byte("k"), 1); return err }, at},
		{"incrbyfloat", func(tx *Tx) error { _, err := tx.IncrByFloat(0, []byte("k"), 1.5); return err }, at},
		{"rename away and back", func(tx *Tx) error {
			if _, err := tx.Rename(0, []byte("k"), []byte("j"), false); err != nil {
				return err
			}
			_, err := tx.Rename(0, []byte("j"), []byte("k"), false)
			return err
		}, at},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := newKS(t)
			k.set(0, "k", "10", at)
			k.update(c.op)
			var got int64
			k.view(func(tx *Tx) error {
				var err error
				got, err = tx.ExpireTime(0, []byte("k"))
				return err
			})
			if got != c.want {
				t.Errorf("expire time %d; want %d", got, c.want)
			}
			k.checkIndex()
		})
	}
}
