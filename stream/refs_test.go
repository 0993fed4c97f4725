package stream

import (
	"fmt"
	"testing"
)

// TestRefsRecycled appends to more streams in one Update than the
// transaction holds refs inline, over several Updates, so that the refs
// taken from the recycled list are handed out again: every stream must end
// with exactly its own entries, as if each ref were fresh.
func TestRefsRecycled(t *testing.T) {
	e := openTestEngine(t, Options{})
	keys := make([][]byte, 7)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "s%d", i)
	}
	want := make(map[string][]ID)
	// A different number of streams per round, so that a list longer
	// than a transaction needs is reused too.
	for round, n := range []int{7, 3, 5, 4, 6} {
		err := e.Update(func(tx *Tx) error {
			for pass := range 2 {
				// All of the round's refs are live at once, as they are
				// in a command that holds several streams: none may
				// share another's memory.
				refs := make([]*streamRef, n)
				for i, k := range keys[:n] {
					s, ok, err := tx.loadStream(0, k)
					if err == nil && !ok {
						s, err = tx.createStream(0, k)
					}
					if err != nil {
						return err
					}
					refs[i] = s
				}
				for i, s := range refs {
					k := keys[i]
					id := ID{uint64(round*100 + pass*10 + i + 1), 0}
					if err := tx.appendEntry(s, id, fv("f", string(k)), tx.e.cache != nil); err != nil {
						return err
					}
					if err := tx.save(s); err != nil {
						return err
					}
					want[string(k)] = append(want[string(k)], id)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err := e.View(func(tx *Tx) error {
		for _, k := range keys {
			es, err := tx.XRange(0, k, ID{}, MaxID, -1, false)
			if err != nil {
				return err
			}
			if len(es) != len(want[string(k)]) {
				t.Errorf("%s: %d entries, want %d", k, len(es), len(want[string(k)]))
				continue
			}
			for i, en := range es {
				if en.ID != want[string(k)][i] || string(en.Fields[1]) != string(k) {
					t.Errorf("%s entry %d: %v %q, want %v with value %s", k, i, en.ID, en.Fields, want[string(k)][i], k)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		checkCacheMatchesStore(t, e, 0, k)
	}
}
