package bridge

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/storage"
	"github.com/eddy-streams/eddy/stream"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The benchmarks mirror bench/natsbench: 10,000 messages of 128 bytes on
// subjects bench.0 … bench.9, Direct Gets of random sequences. The
// DirectGet ones go through the embedded server with a nats.go client,
// so a CPU profile shows the bridge's whole path; the JetStream ones are
// the same requests to a real nats-server stream, for scale.

const benchMessages = 10000

func benchPayload() []byte {
	p := make([]byte, 128)
	for i := range p {
		p[i] = 'a' + byte(i%26)
	}
	return p
}

// benchEngine is an in-memory engine holding stream "bench".
func benchEngine(b *testing.B) *stream.Engine {
	b.Helper()
	db, err := storage.Open(storage.InMemory())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	eng, err := stream.Open(db, stream.Options{})
	if err != nil {
		b.Fatal(err)
	}
	payload := benchPayload()
	key := []byte("bench")
	for i := 0; i < benchMessages; i += 1000 {
		err := eng.Update(func(tx *stream.Tx) error {
			for j := i; j < i+1000; j++ {
				a := stream.XAddArgs{Auto: true, Fields: [][]byte{[]byte("subject"), []byte("bench." + strconv.Itoa(j%10)), []byte("data"), payload}}
				if _, _, err := tx.XAdd(0, key, &a); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return eng
}

func BenchmarkStoreBySeq(b *testing.B) {
	s := EngineStore{Engine: benchEngine(b)}
	rng := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := s.BySeq("bench", 1+rng.Uint64N(benchMessages)); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkStoreLastBySubject(b *testing.B) {
	s := EngineStore{Engine: benchEngine(b)}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, ok, err := s.LastBySubject("bench", "bench."+strconv.Itoa(i%10)); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkServeDirectGet is the bridge's own work per request, without
// the network: decode, read, build the reply.
func BenchmarkServeDirectGet(b *testing.B) {
	a := testAPI(EngineStore{Engine: benchEngine(b)})
	rng := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	var body []byte
	var out countReplies
	for b.Loop() {
		body = append(body[:0], `{"seq":`...)
		body = strconv.AppendUint(body, 1+rng.Uint64N(benchMessages), 10)
		body = append(body, '}')
		a.respond("$JS.API.DIRECT.GET.bench", nil, body, &out)
		if out.n != 1 || out.hdrLen < 20 {
			b.Fatalf("%d replies, header of %d bytes", out.n, out.hdrLen)
		}
		out.n = 0
	}
}

// countReplies is a replier that keeps nothing.
type countReplies struct{ n, hdrLen int }

func (c *countReplies) send(hdr, _ []byte) { c.n++; c.hdrLen = len(hdr) }

func startBenchBridge(b *testing.B) string {
	b.Helper()
	br, err := Start(context.Background(), Config{Port: -1}, EngineStore{Engine: benchEngine(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { br.Close() })
	return br.URL()
}

func startBenchJetStream(b *testing.B) string {
	b.Helper()
	ns := startTestNATS(b, &natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: b.TempDir(), NoLog: true, NoSigs: true})
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "bench", Subjects: []string{"bench.>"}, AllowDirect: true}); err != nil {
		b.Fatal(err)
	}
	payload := benchPayload()
	for i := range benchMessages {
		if _, err := js.PublishAsync("bench."+strconv.Itoa(i%10), payload); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		b.Fatal("publishing timed out")
	}
	return ns.ClientURL()
}

// directGets sends Direct Gets of random sequences from parallelism×
// GOMAXPROCS requesters, each on its own connection.
func directGets(b *testing.B, url string, parallelism int) {
	b.ReportAllocs()
	var id atomic.Uint64
	b.SetParallelism(parallelism)
	b.RunParallel(func(pb *testing.PB) {
		nc, err := nats.Connect(url)
		if err != nil {
			b.Error(err)
			return
		}
		defer nc.Close()
		rng := rand.New(rand.NewPCG(id.Add(1), 1))
		for pb.Next() {
			body := []byte(`{"seq":` + strconv.FormatUint(1+rng.Uint64N(benchMessages), 10) + `}`)
			m, err := nc.Request("$JS.API.DIRECT.GET.bench", body, 5*time.Second)
			if err != nil {
				b.Error(err)
				return
			}
			if m.Header.Get("Nats-Sequence") == "" {
				b.Errorf("reply without a message: %v", m.Header)
				return
			}
		}
	})
}

func BenchmarkDirectGet(b *testing.B) {
	url := startBenchBridge(b)
	b.Run("1", func(b *testing.B) { sequential(b, url) })
	b.Run("16", func(b *testing.B) { directGets(b, url, 8) })
}

func BenchmarkDirectGetJetStream(b *testing.B) {
	url := startBenchJetStream(b)
	b.Run("1", func(b *testing.B) { sequential(b, url) })
	b.Run("16", func(b *testing.B) { directGets(b, url, 8) })
}

// sequential is one requester: each request waits for the last reply.
func sequential(b *testing.B, url string) {
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	for b.Loop() {
		body := []byte(`{"seq":` + strconv.FormatUint(1+rng.Uint64N(benchMessages), 10) + `}`)
		m, err := nc.Request("$JS.API.DIRECT.GET.bench", body, 5*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if m.Header.Get("Nats-Sequence") == "" {
			b.Fatalf("reply without a message: %v", m.Header)
		}
	}
}

// BenchmarkEchoResponder is the floor for a bridge-like responder: a
// nats.go subscriber on its own connection to a plain nats-server that
// answers every Direct Get with a fixed message, no store read.
func BenchmarkEchoResponder(b *testing.B) {
	ns := startTestNATS(b, nil)
	rc, err := nats.Connect(ns.ClientURL(), nats.InProcessServer(ns))
	if err != nil {
		b.Fatal(err)
	}
	defer rc.Close()
	payload := benchPayload()
	if _, err := rc.Subscribe("$JS.API.DIRECT.GET.bench", func(m *nats.Msg) {
		r := nats.NewMsg(m.Reply)
		r.Header.Set("Nats-Stream", "bench")
		r.Header.Set("Nats-Sequence", "1")
		r.Data = payload
		rc.PublishMsg(r)
	}); err != nil {
		b.Fatal(err)
	}
	rc.Flush()
	url := ns.ClientURL()
	b.Run("1", func(b *testing.B) { sequential(b, url) })
	b.Run("16", func(b *testing.B) { directGets(b, url, 8) })
}

// BenchmarkLastPerSubject: what a last_per_subject consumer (kv.Keys,
// kv.WatchAll) reads at its start, for a bucket of 1,000 keys with 20
// revisions each: a lookup per subject against a walk of every entry.
func BenchmarkLastPerSubject(b *testing.B) {
	eng := openEngine(b, nil)
	for rev := 0; rev < 20; rev++ {
		err := eng.Update(func(tx *stream.Tx) error {
			for k := 0; k < 1000; k++ {
				a := stream.XAddArgs{Auto: true, Fields: [][]byte{[]byte("subject"), []byte("$KV.t.k" + strconv.Itoa(k)), []byte("data"), []byte("v" + strconv.Itoa(rev))}}
				if _, _, err := tx.XAdd(0, []byte("KV_t"), &a); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	store := EngineStore{Engine: eng}
	r := newConsumers(store, &recPub{}, slog.New(slog.DiscardHandler))
	c := newTestConsumer(r, natsserver.ConsumerConfig{DeliverPolicy: natsserver.DeliverLastPerSubject, FilterSubject: "$KV.t.>"})
	st, _, err := store.State("KV_t")
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []struct {
		name string
		fn   func(stream.SeqState) ([]uint64, error)
	}{{"indexed", c.lastPerSubject}, {"walk", c.lastPerSubjectWalk}} {
		b.Run(m.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				seqs, err := m.fn(st)
				if err != nil || len(seqs) != 1000 {
					b.Fatalf("%d sequences, %v", len(seqs), err)
				}
			}
		})
	}
}
