package stream

import (
	"fmt"
	"math"
	"testing"
)

func TestScanWindow(t *testing.T) {
	// 1,000 entries over ms 1000..1999: 0.999 ms per entry.
	sm := streamMeta{Length: 1000, First: ID{1000, 0}, Last: ID{1999, 5}}
	for _, tc := range []struct {
		name   string
		sm     streamMeta
		lo, hi ID
		count  int64
		rev    bool
		edge   ID
		ok     bool
	}{
		{"forward from the start", sm, ID{}, MaxID, 10, false, ID{1040, 0}, true},
		{"forward from before the first entry", sm, ID{5, 0}, MaxID, 10, false, ID{1040, 0}, true},
		{"forward from the middle", sm, ID{1500, 3}, MaxID, 10, false, ID{1540, 0}, true},
		{"backward from the end", sm, ID{}, MaxID, 10, true, ID{1960, 0}, true},
		{"backward from the middle", sm, ID{}, ID{1500, 0}, 10, true, ID{1461, 0}, true},
		{"one entry", sm, ID{}, MaxID, 1, false, ID{1004, 0}, true},
		{"forward, the window passes hi", sm, ID{}, ID{1030, 0}, 10, false, ID{}, false},
		{"backward, the window passes lo", sm, ID{1970, 0}, MaxID, 10, true, ID{}, false},
		{"backward, the window starts at lo", sm, ID{1960, 0}, MaxID, 10, true, ID{}, false},
		{"forward, the window passes the last entry", sm, ID{1960, 0}, MaxID, 10, false, ID{}, false},
		{"forward, the window ends at the last entry", sm, ID{1959, 0}, MaxID, 10, false, ID{1999, 0}, true},
		{"backward, the window passes the first entry", sm, ID{}, ID{1039, 0}, 10, true, ID{}, false},
		{"backward, the window starts after the first entry", sm, ID{}, ID{1040, 0}, 10, true, ID{1001, 0}, true},
		{"no count", sm, ID{}, MaxID, -1, false, ID{}, false},
		{"an eighth of the stream", sm, ID{}, MaxID, 125, false, ID{1500, 0}, true},
		{"more than an eighth", sm, ID{}, MaxID, 126, false, ID{}, false},
		{"one millisecond", streamMeta{Length: 1000, First: ID{7, 0}, Last: ID{7, 999}}, ID{}, MaxID, 10, false, ID{}, false},
		{"huge span", streamMeta{Length: 16, First: ID{0, 1}, Last: ID{math.MaxUint64, 0}}, ID{}, MaxID, 1, false, ID{1 << 62, 0}, true},
		{"huge span, backward", streamMeta{Length: 16, First: ID{0, 1}, Last: ID{math.MaxUint64, 0}}, ID{}, MaxID, 1, true, ID{3 << 62, 0}, true},
		{"huge span from late", streamMeta{Length: 16, First: ID{0, 1}, Last: ID{math.MaxUint64, 0}}, ID{math.MaxUint64 - 5, 0}, MaxID, 1, false, ID{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edge, ok := scanWindow(&tc.sm, tc.lo, tc.hi, tc.count, tc.rev)
			if edge != tc.edge || ok != tc.ok {
				t.Fatalf("scanWindow = %v, %v; want %v, %v", edge, ok, tc.edge, tc.ok)
			}
		})
	}
}

// TestWindowedScansReadTheWholeRange reads ranges of streams whose entries
// are spread unevenly in time, so that many first windows hold too few
// entries, and checks every reply against the entries cut from a full read.
func TestWindowedScansReadTheWholeRange(t *testing.T) {
	e := openTestEngine(t, Options{})
	shapes := map[string]func(i int) ID{
		// Sparse old entries, then a dense burst: windows from the start
		// hold one entry, windows from the end plenty.
		"burst": func(i int) ID {
			if i < 40 {
				return ID{uint64(1 + 1000*i), 0}
			}
			return ID{uint64(100_000 + i/20), uint64(i % 20)}
		},
		// Dense, then sparse: the reverse.
		"tail": func(i int) ID {
			if i < 1960 {
				return ID{uint64(1 + i/20), uint64(i % 20)}
			}
			return ID{uint64(10_000 + 1000*i), 0}
		},
		"even": func(i int) ID { return ID{uint64(10 + 3*i), 0} },
	}
	for name, shape := range shapes {
		key := []byte(name)
		var ids []ID
		err := e.Update(func(tx *Tx) error {
			for i := 0; i < 2000; i++ {
				a := XAddArgs{ID: shape(i), Fields: fv("i", fmt.Sprint(i))}
				id, _, err := tx.XAdd(0, key, &a)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			// Holes, which windows count on as entries.
			var del []ID
			for i := 50; i < 2000; i += 7 {
				del = append(del, ids[i])
			}
			_, err := tx.XDel(0, key, del)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var all []Entry
		if err := e.View(func(tx *Tx) (err error) {
			all, err = tx.XRange(0, key, ID{}, MaxID, -1, false)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		bounds := []ID{{}, all[0].ID, all[1].ID, {50_000, 0}, {100_000, 5}, all[len(all)/2].ID, all[len(all)-2].ID, all[len(all)-1].ID, MaxID}
		for _, lo := range bounds {
			for _, hi := range bounds {
				for _, count := range []int64{1, 3, 10, 50, 249, -1} {
					for _, rev := range []bool{false, true} {
						var want []ID
						for _, en := range all {
							if !en.ID.Less(lo) && !hi.Less(en.ID) {
								want = append(want, en.ID)
							}
						}
						if rev {
							for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
								want[i], want[j] = want[j], want[i]
							}
						}
						if count >= 0 && int64(len(want)) > count {
							want = want[:count]
						}
						var got []ID
						if err := e.View(func(tx *Tx) error {
							_, err := tx.XRangeEach(0, key, lo, hi, count, rev, func(en Entry) error {
								got = append(got, en.ID)
								return nil
							})
							return err
						}); err != nil {
							t.Fatal(err)
						}
						if fmt.Sprint(got) != fmt.Sprint(want) {
							t.Fatalf("%s [%v, %v] count %d rev %v:\n got %v\nwant %v", name, lo, hi, count, rev, got, want)
						}
					}
				}
			}
		}
	}
}
