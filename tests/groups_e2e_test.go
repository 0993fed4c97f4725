package tests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ledger records, for the worker-pool test, what happened to each entry.
type ledger struct {
	mu        sync.Mutex
	acked     map[string]string // id -> consumer that acked it
	processed map[string]int    // id -> times processed to completion
	errs      []string
}

func (l *ledger) delivered(consumer, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if by, ok := l.acked[id]; ok {
		l.errs = append(l.errs, fmt.Sprintf("%s got %s, already acked by %s", consumer, id, by))
	}
}

func (l *ledger) done(consumer, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.processed[id]++
	l.acked[id] = consumer
}

// TestGroupWorkerPoolCrashAndClaim runs consumers that read batches of 10
// with XREADGROUP and acknowledge them; one crashes in the middle of its
// first batch. A rescuer claims what it left with XAUTOCLAIM once it is
// idle long enough. No entry is lost, and none is delivered again after
// it was acknowledged.
func TestGroupWorkerPoolCrashAndClaim(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	c := e.Client()
	ctx := testContext(t)
	const entries, workers = 300, 4
	const stream, group = "jobs", "workers"

	if err := c.XGroupCreateMkStream(ctx, stream, group, "$").Err(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	pipe := c.Pipeline()
	for i := range entries {
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"job", i}})
	}
	cmds, err := pipe.Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range cmds {
		ids = append(ids, cmd.(*redis.StringCmd).Val())
	}

	l := &ledger{acked: map[string]string{}, processed: map[string]int{}}
	readBatch := func(consumer string) ([]redis.XMessage, error) {
		res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: group, Consumer: consumer, Streams: []string{stream, ">"}, Count: 10, Block: -1,
		}).Result()
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if len(res) != 1 || len(res[0].Messages) == 0 || len(res[0].Messages) > 10 {
			return nil, fmt.Errorf("XREADGROUP COUNT 10 = %+v", res)
		}
		return res[0].Messages, nil
	}
	process := func(consumer string, msgs []redis.XMessage) error {
		for _, m := range msgs {
			l.delivered(consumer, m.ID)
			if n, err := c.XAck(ctx, stream, group, m.ID).Result(); err != nil || n != 1 {
				return fmt.Errorf("%s: XACK %s = %d, %v", consumer, m.ID, n, err)
			}
			l.done(consumer, m.ID)
		}
		return nil
	}

	// The crashing worker takes a full batch, finishes 4 entries, and stops.
	crashed, err := readBatch("crasher")
	if err != nil || len(crashed) != 10 {
		t.Fatalf("crasher's batch: %d entries, %v", len(crashed), err)
	}
	if err := process("crasher", crashed[:4]); err != nil {
		t.Fatal(err)
	}
	for _, m := range crashed[4:] {
		l.delivered("crasher", m.ID)
	}

	var wg sync.WaitGroup
	errCh := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("worker-%d", w)
			for {
				msgs, err := readBatch(name)
				if err != nil {
					errCh <- err
					return
				}
				if msgs == nil {
					return
				}
				if err := process(name, msgs); err != nil {
					errCh <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errCh)
	for err := range errCh {
		t.Fatal(err)
	}

	// Only the crasher's 6 unfinished entries are pending.
	sum, err := c.XPending(ctx, stream, group).Result()
	if err != nil || sum.Count != 6 || sum.Consumers["crasher"] != 6 || len(sum.Consumers) != 1 {
		t.Fatalf("XPENDING after the workers = %+v, %v", sum, err)
	}
	// Not idle for an hour: nothing to claim yet.
	msgs, _, err := c.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: stream, Group: group, Consumer: "rescuer", MinIdle: time.Hour, Start: "0", Count: 10,
	}).Result()
	if err != nil || len(msgs) != 0 {
		t.Fatalf("XAUTOCLAIM min-idle 1h = %v, %v", msgs, err)
	}
	// Wait until the crasher's entries have been idle for 50 ms.
	const minIdle = 50 * time.Millisecond
	waitFor(t, 10*time.Second, "the crasher's entries to be idle", func() (bool, error) {
		pe, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{
			Stream: stream, Group: group, Idle: minIdle, Start: "-", End: "+", Count: 100,
		}).Result()
		return err == nil && len(pe) == 6, err
	})
	var claimed []redis.XMessage
	for start := "0"; ; {
		msgs, next, err := c.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: stream, Group: group, Consumer: "rescuer", MinIdle: minIdle, Start: start, Count: 4,
		}).Result()
		if err != nil {
			t.Fatal(err)
		}
		claimed = append(claimed, msgs...)
		if next == "0-0" {
			break
		}
		start = next
	}
	var want, got []string
	for _, m := range crashed[4:] {
		want = append(want, m.ID)
	}
	for _, m := range claimed {
		got = append(got, m.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("XAUTOCLAIM claimed %v, want the crasher's unfinished %v", got, want)
	}
	pe, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: group, Start: "-", End: "+", Count: 100}).Result()
	if err != nil || len(pe) != 6 {
		t.Fatalf("XPENDING extended = %v, %v", pe, err)
	}
	for _, p := range pe {
		if p.Consumer != "rescuer" || p.RetryCount != 2 {
			t.Errorf("after the claim %s: owner %s, deliveries %d; want rescuer, 2", p.ID, p.Consumer, p.RetryCount)
		}
	}
	if err := process("rescuer", claimed); err != nil {
		t.Fatal(err)
	}

	// Nothing lost, nothing done twice, nothing left.
	for _, id := range ids {
		if n := l.processed[id]; n != 1 {
			t.Errorf("entry %s processed %d times", id, n)
		}
	}
	for _, e := range l.errs {
		t.Error(e)
	}
	if sum, err := c.XPending(ctx, stream, group).Result(); err != nil || sum.Count != 0 {
		t.Errorf("XPENDING at the end = %+v, %v", sum, err)
	}
	groups, err := c.XInfoGroups(ctx, stream).Result()
	if err != nil || len(groups) != 1 || groups[0].Pending != 0 || groups[0].EntriesRead != entries ||
		groups[0].Lag != 0 || groups[0].LastDeliveredID != ids[len(ids)-1] || groups[0].Consumers != workers+2 {
		t.Errorf("XINFO GROUPS at the end = %+v, %v", groups, err)
	}
	if msgs, _, err := c.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: stream, Group: group, Consumer: "late", Start: "0", Count: 100,
	}).Result(); err != nil || len(msgs) != 0 {
		t.Errorf("XAUTOCLAIM after everything was acked = %v, %v", msgs, err)
	}
}

// TestXReadGroupBlockWokenByXAdd parks an XREADGROUP BLOCK 0 and wakes it
// with XADD; the entry is then pending for that consumer.
func TestXReadGroupBlockWokenByXAdd(t *testing.T) {
	t.Parallel()
	e := startEddy(t)
	admin, reader := e.Client(), e.Client()
	ctx := testContext(t)
	if err := admin.XGroupCreateMkStream(ctx, "s", "g", "$").Err(); err != nil {
		t.Fatal(err)
	}
	type result struct {
		streams []redis.XStream
		err     error
	}
	done := make(chan result, 1)
	go func() {
		s, err := reader.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: "g", Consumer: "c", Streams: []string{"s", ">"}, Block: 0,
		}).Result()
		done <- result{s, err}
	}()
	waitBlocked(t, admin, 1)
	if err := admin.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "7-7", Values: []string{"k", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || len(r.streams) != 1 || len(r.streams[0].Messages) != 1 ||
			r.streams[0].Messages[0].ID != "7-7" || r.streams[0].Messages[0].Values["k"] != "v" {
			t.Fatalf("XREADGROUP BLOCK 0 = %+v, %v", r.streams, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("XREADGROUP BLOCK 0 was not woken by XADD")
	}
	pe, err := admin.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "s", Group: "g", Start: "-", End: "+", Count: 10}).Result()
	if err != nil || len(pe) != 1 || pe[0].ID != "7-7" || pe[0].Consumer != "c" || pe[0].RetryCount != 1 {
		t.Fatalf("XPENDING after the wake-up = %+v, %v", pe, err)
	}
	waitBlocked(t, admin, 0)
}

// TestGroupsSurviveRestart restarts the server with groups, consumers and
// a PEL with various delivery counts, and finds them as they were.
func TestGroupsSurviveRestart(t *testing.T) {
	t.Parallel()
	// Redis loses delivery counts and entries-read when it reloads its
	// append-only file; Eddy keeps them.
	eddyOnly(t, "Redis does not keep delivery counts across an AOF reload")
	e := startEddy(t)
	c := e.Client()
	ctx := testContext(t)
	mustOK := func(cmd redis.Cmder) {
		t.Helper()
		if err := cmd.Err(); err != nil {
			t.Fatalf("%v: %v", cmd.Args(), err)
		}
	}
	for i := 1; i <= 20; i++ {
		mustOK(c.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: fmt.Sprintf("%d-0", i), Values: []any{"n", i}}))
	}
	mustOK(c.XGroupCreate(ctx, "s", "g", "0"))
	mustOK(c.XGroupCreate(ctx, "s", "idle", "$"))
	mustOK(c.XGroupCreateConsumer(ctx, "s", "idle", "nobody"))
	mustOK(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "a", Streams: []string{"s", ">"}, Count: 8, Block: -1}))
	mustOK(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "b", Streams: []string{"s", ">"}, Count: 4, Block: -1}))
	mustOK(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "a", Streams: []string{"s", "0"}, Block: -1}))
	mustOK(c.XClaim(ctx, &redis.XClaimArgs{Stream: "s", Group: "g", Consumer: "b", Messages: []string{"2-0", "3-0"}}))
	mustOK(c.Do(ctx, "XCLAIM", "s", "g", "c", "0", "4-0", "RETRYCOUNT", "9", "JUSTID"))
	mustOK(c.XAck(ctx, "s", "g", "1-0", "9-0"))
	mustOK(c.XDel(ctx, "s", "5-0"))

	// What the group looks like, without the idle times.
	snapshot := func() string {
		t.Helper()
		var b []byte
		for _, args := range [][]any{
			{"XPENDING", "s", "g"},
			{"XINFO", "GROUPS", "s"},
			{"XINFO", "STREAM", "s"},
		} {
			v, err := c.Do(ctx, args...).Result()
			if err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			b = fmt.Appendf(b, "%v\n", v)
		}
		pe, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "s", Group: "g", Start: "-", End: "+", Count: 100}).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pe {
			b = fmt.Appendf(b, "%s %s %d\n", p.ID, p.Consumer, p.RetryCount)
		}
		for _, g := range []string{"g", "idle"} {
			cs, err := c.XInfoConsumers(ctx, "s", g).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, cn := range cs {
				b = fmt.Appendf(b, "%s/%s pending %d\n", g, cn.Name, cn.Pending)
			}
		}
		return string(b)
	}
	before := snapshot()
	e.Restart()
	after := snapshot()
	if before != after {
		t.Fatalf("groups changed across a restart:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	t.Logf("state kept across the restart:\n%s", after)

	// The group carries on where it was: new entries after 12-0, the
	// history with its counts, acknowledgements.
	res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "b", Streams: []string{"s", ">"}, Count: 2, Block: -1}).Result()
	if err != nil || len(res[0].Messages) != 2 || res[0].Messages[0].ID != "13-0" {
		t.Fatalf("XREADGROUP > after restart = %+v, %v", res, err)
	}
	pe, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "s", Group: "g", Start: "4-0", End: "4-0", Count: 1}).Result()
	if err != nil || len(pe) != 1 || pe[0].Consumer != "c" || pe[0].RetryCount != 9 {
		t.Fatalf("4-0 after restart = %+v, %v", pe, err)
	}
	if n, err := c.XAck(ctx, "s", "g", "2-0", "3-0", "4-0").Result(); err != nil || n != 3 {
		t.Fatalf("XACK after restart = %d, %v", n, err)
	}
	// A blocked reader still works after the restart.
	done := make(chan error, 1)
	reader := e.Client()
	go func() {
		_, err := reader.XReadGroup(context.Background(), &redis.XReadGroupArgs{
			Group: "idle", Consumer: "nobody", Streams: []string{"s", ">"}, Block: 0,
		}).Result()
		done <- err
	}()
	waitBlocked(t, c, 1)
	mustOK(c.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "30-0", Values: []any{"n", 30}}))
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocked XREADGROUP not woken after restart")
	}
}
