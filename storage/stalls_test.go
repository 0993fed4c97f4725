package storage

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// TestWriteStallsAccount holds the bookkeeping of write stops: each stop
// counts once, its length when it ends, and a stop in progress shows as
// stalled with its length so far.
func TestWriteStallsAccount(t *testing.T) {
	clock := time.Unix(1000, 0)
	w := newWriteStalls()
	w.now = func() time.Time { return clock }
	step := func(d time.Duration) { clock = clock.Add(d) }

	tests := []struct {
		name string
		do   func()
		want WriteStallStats
	}{
		{"none yet", func() {}, WriteStallStats{}},
		{"first stop begins", func() { w.begin(pebble.WriteStallBeginInfo{}); step(3 * time.Second) },
			WriteStallStats{Count: 1, Total: 3 * time.Second, Stalled: true}},
		{"a second begin while stopped is the same stop", func() { w.begin(pebble.WriteStallBeginInfo{}); step(time.Second) },
			WriteStallStats{Count: 1, Total: 4 * time.Second, Stalled: true}},
		{"it ends", func() { w.end(); step(time.Minute) },
			WriteStallStats{Count: 1, Total: 4 * time.Second}},
		{"an end without a stop changes nothing", func() { w.end() },
			WriteStallStats{Count: 1, Total: 4 * time.Second}},
		{"a second stop", func() { w.begin(pebble.WriteStallBeginInfo{}); step(500 * time.Millisecond); w.end() },
			WriteStallStats{Count: 2, Total: 4500 * time.Millisecond}},
	}
	for _, tt := range tests {
		tt.do()
		if got := w.stats(); got != tt.want {
			t.Fatalf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestWriteStallsOfAStore holds every compaction of a real store and
// writes until L0 stops the writes: DB.WriteStalls must show the stop
// while it lasts, and count it once the compactions go on.
func TestWriteStallsOfAStore(t *testing.T) {
	db, free := openPaused(t, func(released <-chan struct{}) { <-released }, nil)
	wrote := writeOverlapping(db, 60_000)
	deadline := time.Now().Add(30 * time.Second)
	for !db.WriteStalls().Stalled {
		select {
		case err := <-wrote:
			t.Fatalf("writes ended (%v) without a stop while every compaction was held", err)
		default:
		}
		if time.Now().After(deadline) {
			free()
			<-wrote
			t.Fatal("writes did not stop in 30 s with every compaction held")
		}
		time.Sleep(time.Millisecond)
	}
	free()
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	s := db.WriteStalls()
	if s.Count == 0 || s.Total <= 0 {
		t.Errorf("after a stop: %+v, want it counted with its length", s)
	}
}
