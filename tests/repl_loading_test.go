package tests

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestReplLoadingAnswersAtOnce: while a replica loads a full sync, which
// holds its store locked, readers are answered -LOADING at once (as Redis
// answers while it loads) instead of waiting for the whole load; INFO
// answers too. Once loaded, the replica serves the primary's data.
func TestReplLoadingAnswersAtOnce(t *testing.T) {
	skipAgainstRedis(t)
	ctx := context.Background()
	p := startEddy(t)
	pc := p.Client()
	// Enough data that loading it takes a good part of a second or more.
	value := strings.Repeat("x", 2048)
	entries := 60000
	if raceEnabled {
		entries = 20000 // loads about as long under -race
	}
	for i := 0; i < entries; i += 1000 {
		pipe := pc.Pipeline()
		for j := i; j < i+1000; j++ {
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: fmt.Sprintf("s%d", j%8), Values: []any{"v", value}})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	pc.Set(ctx, "k", "primary", 0)

	r := startEddy(t)
	rc := r.Client()
	rc.Set(ctx, "k", "old", 0)
	reader := r.Raw()
	const loading = "-LOADING Redis is loading the dataset in memory\r\n"

	start := time.Now()
	replicaOf(t, rc, p)
	var n, loadingReplies int
	var lat []time.Duration
	var worst time.Duration
	var worstCmd string
	for up := false; !up; n++ {
		cmds := [][]string{{"GET", "k"}, {"XLEN", "s1"}, {"INFO", "replication"}}
		cmd := cmds[n%len(cmds)]
		sent := time.Now()
		got, err := reader.Do(cmd...)
		d := time.Since(sent)
		lat = append(lat, d)
		if d > worst {
			worst, worstCmd = d, strings.Join(cmd, " ")
		}
		if err != nil {
			t.Fatalf("%v on the syncing replica: %v", cmd, err)
		}
		reply := string(got)
		switch {
		case reply == loading:
			loadingReplies++
		case cmd[0] == "INFO":
			up = strings.Contains(reply, "master_link_status:up")
		case cmd[0] == "GET" && reply != "$3\r\nold\r\n" && reply != "$7\r\nprimary\r\n":
			t.Fatalf("GET k on the syncing replica = %q", reply)
		}
		if time.Since(start) > 60*time.Second {
			t.Fatal("the replica did not finish its full sync in 60s")
		}
	}
	took := time.Since(start)
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	t.Logf("full sync of %d entries: %v; %d reads, %d answered -LOADING; p99 %v, slowest %v (%s)",
		entries, took.Round(time.Millisecond), n, loadingReplies, p99, worst, worstCmd)
	if loadingReplies == 0 {
		t.Errorf("no read was answered -LOADING during a %v full sync", took)
	}
	// On a busy 2-CPU machine a process may wait that long for a CPU
	// now and then: the bound is on the 99th percentile, and grows with
	// the load on a slower machine. A read that waited for the load
	// would take most of it.
	if limit := max(100*time.Millisecond, took/10); p99 > limit {
		t.Errorf("p99 of reads on the syncing replica %v, want < %v (a tenth of the %v load)", p99, limit, took)
	}
	if worst > took/3 {
		t.Errorf("%s took %v on the syncing replica: it waited for the %v load", worstCmd, worst, took)
	}
	if got, err := rc.Get(ctx, "k").Result(); err != nil || got != "primary" {
		t.Errorf("GET k after the sync = %q, %v", got, err)
	}
	if a, b := pc.DBSize(ctx).Val(), rc.DBSize(ctx).Val(); a != b {
		t.Errorf("DBSIZE: primary %d, replica %d", a, b)
	}
}
