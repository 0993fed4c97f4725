package tests

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestNATSPrimaryAndReplicaOneQueueGroup: a primary and its replica both
// run a bridge on one external NATS. Every Direct Get is answered exactly
// once (the bridges are one queue group), and the replica answers alone
// once the primary is gone: both serve the reads.
func TestNATSPrimaryAndReplicaOneQueueGroup(t *testing.T) {
	skipAgainstRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	external := startNATS(t, false)
	url := external.ClientURL()
	primary := startEddy(t, "--nats-port", "0", "--nats-url", url)
	startReplica(t, primary.Addr(), "--nats-port", "0", "--nats-url", url)
	pc := primary.Client()
	for i := 0; i < 3; i++ {
		if err := pc.Do(ctx, "XADD", "orders", "*", "data", "m").Err(); err != nil {
			t.Fatal(err)
		}
	}
	waitCaughtUp(t, pc, 1)

	// Raw requests on one inbox: a duplicate answer would show up as an
	// extra message.
	nc := natsConnect(t, url)
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	const requests = 40
	for i := 0; i < requests; i++ {
		if err := nc.PublishRequest("$JS.eddy.API.DIRECT.GET.orders", inbox, []byte(`{"seq":2}`)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < requests; i++ {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("reply %d of %d: %v", i+1, requests, err)
		}
		if m.Header.Get("Nats-Sequence") != "2" {
			t.Fatalf("reply %d: headers %v", i+1, m.Header)
		}
	}
	if m, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("an extra reply (a request answered twice): %v", m.Header)
	}

	// The replica alone still answers.
	primary.Stop()
	m, err := nc.RequestWithContext(ctx, "$JS.eddy.API.DIRECT.GET.orders", []byte(`{"seq":3}`))
	if err != nil || m.Header.Get("Nats-Sequence") != "3" {
		t.Fatalf("the replica's answer: %v, %v", m, err)
	}
}
