package main

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/bench/internal/resp"
	"github.com/eddy-streams/eddy/bench/internal/stats"
)

// readerConn is a connection reading canned replies.
func readerConn(replies string) *resp.Conn {
	return resp.FromReader(bufio.NewReader(strings.NewReader(replies)))
}

func ids(l *idList) string {
	var s []string
	for i := range l.len() {
		s = append(s, string(l.at(i)))
	}
	return strings.Join(s, ",")
}

func TestEntries(t *testing.T) {
	tests := []struct {
		name, reply, want string
		err               error
	}{
		{"nil", "*-1\r\n", "", nil},
		{"two", "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$5\r\n12-34\r\n*2\r\n$1\r\nf\r\n$0\r\n\r\n", "1-1,12-34", nil},
		{"deleted entry", "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n5-0\r\n*-1\r\n", "5-0", nil},
		{"error", "-NOGROUP No such key\r\n", "", resp.ServerError("NOGROUP No such key")},
		{"wrong type", ":3\r\n", "", resp.ErrProtocol},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var l idList
			err := readEntries(readerConn(tc.reply), &l)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || ids(&l) != tc.want {
				t.Fatalf("got %q, %v; want %q", ids(&l), err, tc.want)
			}
		})
	}
}

func TestAutoclaim(t *testing.T) {
	reply := "*3\r\n$3\r\n9-0\r\n*1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*1\r\n$3\r\n4-0\r\n"
	var l idList
	cur, err := readAutoclaim(readerConn(reply), []byte("0-0"), &l)
	if err != nil || string(cur) != "9-0" || ids(&l) != "3-0" {
		t.Fatalf("cursor %q ids %q err %v", cur, ids(&l), err)
	}
}

func TestSkip(t *testing.T) {
	c := readerConn("+OK\r\n$-1\r\n*2\r\n:1\r\n*1\r\n$2\r\nab\r\n:7\r\n")
	for range 3 {
		if err := c.Skip(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := c.Integer(); n != 7 || err != nil {
		t.Fatalf("after skipping: %d, %v", n, err)
	}
}

// TestLoopAllocs holds the measurement loop's promise: parsing a read
// reply and encoding the XACK allocate nothing once buffers have grown.
func TestLoopAllocs(t *testing.T) {
	var one bytes.Buffer
	one.WriteString("*1\r\n*2\r\n$1\r\ns\r\n*10\r\n")
	for range 10 {
		one.WriteString("*2\r\n$15\r\n1700000000000-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
	}
	one.WriteString(":10\r\n")
	const runs = 100
	src := bytes.NewReader(bytes.Repeat(one.Bytes(), runs+1))
	c := resp.FromReader(bufio.NewReaderSize(src, 64<<10))
	l := idList{buf: make([]byte, 0, 256), ends: make([]int, 0, 10)}
	ack := make([]byte, 0, 512)
	lat := make([]time.Duration, 0, runs+1)
	allocs := testing.AllocsPerRun(runs, func() {
		t0 := time.Now()
		l.reset()
		if err := readEntries(c, &l); err != nil || l.len() != 10 {
			t.Fatal(err, l.len())
		}
		ack = resp.AppendArrayHeader(ack[:0], 3+l.len())
		ack = resp.AppendBulkString(ack, "XACK")
		for j := range l.len() {
			ack = resp.AppendBulk(ack, l.at(j))
		}
		if _, err := c.Integer(); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per loop", allocs)
	}
}

func TestPercentile(t *testing.T) {
	d := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	if p := stats.Percentile(d, 0.5); p != 5 {
		t.Errorf("p50 %v", p)
	}
	if p := stats.Percentile(d, 0.99); p != 10 {
		t.Errorf("p99 %v", p)
	}
	if m := stats.Median([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median %v", m)
	}
}
