package stream

import (
	"fmt"
	"reflect"
	"testing"
)

// TestXRangeEachMatchesXRange: the visitor sees exactly the entries XRange
// copies out, in the same order, for streams whose values are stored with
// their field names and as values of a recorded field set.
func TestXRangeEachMatchesXRange(t *testing.T) {
	e := openTestEngine(t, Options{Limits: func() NodeLimits { return NodeLimits{MaxBytes: 4096, MaxEntries: 4} }})
	for i := 1; i <= 30; i++ {
		fields := fv("f", fmt.Sprint(i), "g", "x")
		if i%7 == 0 {
			fields = fv("other", fmt.Sprint(i)) // a different field set
		}
		if _, err := xadd(t, e, "s", XAddArgs{ID: ID{uint64(i), 0}, Fields: fields}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Update(func(tx *Tx) error {
		_, err := tx.XDel(0, []byte("s"), []ID{{5, 0}, {6, 0}, {20, 0}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		key        string
		start, end ID
		count      int64
		rev        bool
	}{
		{"s", ID{}, MaxID, -1, false},
		{"s", ID{}, MaxID, -1, true},
		{"s", ID{3, 0}, ID{9, 0}, -1, false},
		{"s", ID{}, MaxID, 10, false},
		{"s", ID{}, MaxID, 10, true},
		{"s", ID{5, 0}, ID{6, 0}, -1, false}, // only deleted entries
		{"s", ID{9, 0}, ID{3, 0}, -1, false}, // empty range
		{"s", ID{}, MaxID, 0, false},
		{"missing", ID{}, MaxID, -1, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s_%v_%v_%d_%v", c.key, c.start, c.end, c.count, c.rev), func(t *testing.T) {
			err := e.View(func(tx *Tx) error {
				want, err := tx.XRange(0, []byte(c.key), c.start, c.end, c.count, c.rev)
				if err != nil {
					return err
				}
				var got []Entry
				n, err := tx.XRangeEach(0, []byte(c.key), c.start, c.end, c.count, c.rev, func(e Entry) error {
					// The entry is valid only during the call: keep a copy.
					cp := Entry{ID: e.ID}
					for _, f := range e.Fields {
						cp.Fields = append(cp.Fields, append([]byte(nil), f...))
					}
					got = append(got, cp)
					return nil
				})
				if err != nil {
					return err
				}
				if n != len(want) || !reflect.DeepEqual(got, want) {
					t.Fatalf("XRangeEach gave %d entries %v; XRange %v", n, got, want)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
