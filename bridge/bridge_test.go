package bridge

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestBridgeOverNATS drives the bridge through its embedded server: a
// Direct Get answered on the read loop, a batch answered by a worker
// (several messages to one inbox), and a request whose reply subject is
// the bridge's own API, which must not stop it from answering.
func TestBridgeOverNATS(t *testing.T) {
	f := adrStore()
	for i := range 300 {
		f.add("big", uint64(i), "data", strings.Repeat("x", 1000))
	}
	b, err := Start(context.Background(), Config{Port: -1}, f)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	nc, err := nats.Connect(b.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	get := func() {
		t.Helper()
		m, err := nc.Request("$JS.API.DIRECT.GET.stream", []byte(`{"seq":2}`), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get("Nats-Sequence") != "2" || string(m.Data) != "m2" {
			t.Fatalf("direct get: %v %q", m.Header, m.Data)
		}
	}
	get()

	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("$JS.API.DIRECT.GET.stream", inbox, []byte(`{"seq":4,"batch":5}`)); err != nil {
		t.Fatal(err)
	}
	var seqs []string
	for {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("batch after %v: %v", seqs, err)
		}
		if m.Header.Get("Status") == "204" {
			break
		}
		seqs = append(seqs, m.Header.Get("Nats-Sequence"))
	}
	if len(seqs) != 3 || seqs[0] != "4" || seqs[2] != "6" {
		t.Errorf("batch from 4: sequences %v", seqs)
	}

	// Replies to the bridge's own subjects would come back to it, while
	// it writes: a burst larger than the server's read buffer would then
	// wait on itself.
	for _, reply := range []string{"$JS.API.INFO", "$JS.API.DIRECT.GET.stream"} {
		for _, req := range []string{`{"seq":1}`, `{"seq":1,"batch":300}`} {
			if err := nc.PublishRequest("$JS.API.DIRECT.GET.big", reply, []byte(req)); err != nil {
				t.Fatal(err)
			}
		}
	}
	get()
}
