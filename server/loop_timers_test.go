package server

import (
	"container/heap"
	"slices"
	"testing"
	"time"
)

func TestParkTimers(t *testing.T) {
	base := time.Now()
	for _, tc := range []struct {
		name   string
		at     []int // deadlines, ms after base, one client each
		remove []int // clients whose deadline goes before popping
		want   []int // clients popped, in order
		tied   bool  // equal deadlines: any order
	}{
		{"in order", []int{3, 1, 2}, nil, []int{1, 2, 0}, false},
		{"remove the earliest", []int{3, 1, 2}, []int{1}, []int{2, 0}, false},
		{"remove all but one", []int{5, 4, 3, 2, 1}, []int{4, 0, 2, 1}, []int{3}, false},
		{"equal deadlines", []int{1, 1, 1}, []int{1}, []int{0, 2}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h parkTimers
			lcs := make([]*loopConn, len(tc.at))
			for i, ms := range tc.at {
				lcs[i] = &loopConn{timerIx: -1}
				heap.Push(&h, parkTimer{at: base.Add(time.Duration(ms) * time.Millisecond), lc: lcs[i]})
			}
			for _, i := range tc.remove {
				heap.Remove(&h, lcs[i].timerIx)
				if lcs[i].timerIx != -1 {
					t.Errorf("client %d removed, still at %d", i, lcs[i].timerIx)
				}
			}
			var got []int
			for h.Len() > 0 {
				for j, pt := range h {
					if pt.lc.timerIx != j {
						t.Fatalf("heap slot %d holds a client at %d", j, pt.lc.timerIx)
					}
				}
				lc := heap.Pop(&h).(parkTimer).lc
				got = append(got, slices.Index(lcs, lc))
			}
			if tc.tied {
				slices.Sort(got)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("popped %v, want %v", got, tc.want)
			}
		})
	}
}
