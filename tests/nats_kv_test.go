package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// kvEntry is what a KV reader sees of an entry, except its time.
func kvEntry(e jetstream.KeyValueEntry) string {
	if e == nil {
		return "<initial values done>"
	}
	return fmt.Sprintf("%s=%q rev=%d op=%s delta=%d", e.Key(), e.Value(), e.Revision(), e.Operation(), e.Delta())
}

// kvPair is a NATS KV bucket on a real nats-server and the same bucket
// in Eddy (stream KV_<bucket>), written alike.
type kvPair struct {
	t           *testing.T
	ctx         context.Context
	real, eddy  jetstream.KeyValue
	rjs         jetstream.JetStream
	eddyProc    *eddyProc
	bucket      string
	rnc, enc    *nats.Conn
	eddyNATSURL string
}

func (p *kvPair) put(key, value string) {
	p.t.Helper()
	if _, err := p.real.Put(p.ctx, key, []byte(value)); err != nil {
		p.t.Fatal(err)
	}
	if err := p.eddyProc.Client().Do(p.ctx, "XADD", "KV_"+p.bucket, "*", "subject", "$KV."+p.bucket+"."+key, "data", value).Err(); err != nil {
		p.t.Fatal(err)
	}
}

func (p *kvPair) del(key string) {
	p.t.Helper()
	if err := p.real.Delete(p.ctx, key); err != nil {
		p.t.Fatal(err)
	}
	if err := p.eddyProc.Client().Do(p.ctx, "XADD", "KV_"+p.bucket, "*", "subject", "$KV."+p.bucket+"."+key, "KV-Operation", "DEL").Err(); err != nil {
		p.t.Fatal(err)
	}
}

func startKVPair(t *testing.T, ctx context.Context) *kvPair {
	eddy, url := startEddyNATS(t)
	truth := startNATS(t, true)
	p := &kvPair{t: t, ctx: ctx, eddyProc: eddy, bucket: "cfg", eddyNATSURL: url}
	p.rnc, p.enc = natsConnect(t, truth.ClientURL()), natsConnect(t, url)
	var err error
	if p.rjs, err = jetstream.New(p.rnc); err != nil {
		t.Fatal(err)
	}
	// The real bucket is the stream CreateKeyValue makes, but that allows
	// deleting a message, so a test can remove one as XDEL does.
	if _, err := p.rjs.CreateStream(ctx, jetstream.StreamConfig{
		Name: "KV_" + p.bucket, Subjects: []string{"$KV." + p.bucket + ".>"}, MaxMsgsPerSubject: 64,
		Discard: jetstream.DiscardNew, AllowRollup: true, AllowDirect: true, Duplicates: 2 * time.Minute,
	}); err != nil {
		t.Fatal(err)
	}
	if p.real, err = p.rjs.KeyValue(ctx, p.bucket); err != nil {
		t.Fatal(err)
	}
	// Eddy's bucket is a stream with one entry; the real one gets the
	// same first revision.
	p.put("color", "blue")
	ejs, err := jetstream.New(p.enc)
	if err != nil {
		t.Fatal(err)
	}
	if p.eddy, err = ejs.KeyValue(ctx, p.bucket); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNATSKVDiff reads the same KV bucket from a real nats-server and
// from Eddy with nats.go's KV API (History, Keys, ListKeys, watchers
// with their initial values and a live update) and compares what the
// client sees: keys, values, revisions, operations and deltas.
func TestNATSKVDiff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := startKVPair(t, ctx)
	p.put("size", "L")
	p.put("color", "red")
	p.put("gone", "x")
	p.del("gone")
	p.put("shape.outer", "round")
	p.put("color", "green")

	history := func(kv jetstream.KeyValue, key string) []string {
		h, err := kv.History(ctx, key)
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		var out []string
		for _, e := range h {
			out = append(out, kvEntry(e))
		}
		return out
	}
	for _, key := range []string{"color", "size", "gone", "shape.outer", "nosuch"} {
		if a, b := history(p.real, key), history(p.eddy, key); !slices.Equal(a, b) {
			t.Errorf("History(%s):\nnats-server %q\neddy        %q", key, a, b)
		}
	}

	keys := func(kv jetstream.KeyValue) []string {
		k, err := kv.Keys(ctx)
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		slices.Sort(k)
		return k
	}
	if a, b := keys(p.real), keys(p.eddy); !slices.Equal(a, b) {
		t.Errorf("Keys:\nnats-server %q\neddy        %q", a, b)
	}
	listKeys := func(kv jetstream.KeyValue) []string {
		l, err := kv.ListKeys(ctx)
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		var k []string
		for key := range l.Keys() {
			k = append(k, key)
		}
		slices.Sort(k)
		return k
	}
	if a, b := listKeys(p.real), listKeys(p.eddy); !slices.Equal(a, b) {
		t.Errorf("ListKeys:\nnats-server %q\neddy        %q", a, b)
	}

	// Watchers: initial values up to the nil marker, in order.
	type watch struct {
		name string
		open func(kv jetstream.KeyValue) (jetstream.KeyWatcher, error)
	}
	initial := func(w jetstream.KeyWatcher, updatesOnly bool) []string {
		if updatesOnly {
			return nil
		}
		var out []string
		for {
			select {
			case e := <-w.Updates():
				out = append(out, kvEntry(e))
				if e == nil {
					return out
				}
			case <-time.After(5 * time.Second):
				return append(out, "timeout")
			}
		}
	}
	next := func(w jetstream.KeyWatcher) string {
		select {
		case e := <-w.Updates():
			return kvEntry(e)
		case <-time.After(5 * time.Second):
			return "timeout"
		}
	}
	watches := []struct {
		watch
		updatesOnly bool
	}{
		{watch{"WatchAll", func(kv jetstream.KeyValue) (jetstream.KeyWatcher, error) { return kv.WatchAll(ctx) }}, false},
		{watch{"Watch(color)", func(kv jetstream.KeyValue) (jetstream.KeyWatcher, error) { return kv.Watch(ctx, "color") }}, false},
		{watch{"Watch(shape.*) history", func(kv jetstream.KeyValue) (jetstream.KeyWatcher, error) {
			return kv.Watch(ctx, "shape.*", jetstream.IncludeHistory())
		}}, false},
		{watch{"WatchAll history", func(kv jetstream.KeyValue) (jetstream.KeyWatcher, error) {
			return kv.WatchAll(ctx, jetstream.IncludeHistory())
		}}, false},
		{watch{"WatchAll meta only", func(kv jetstream.KeyValue) (jetstream.KeyWatcher, error) {
			return kv.WatchAll(ctx, jetstream.MetaOnly())
		}}, false},
		{watch{"WatchAll ignore deletes", func(kv jetstream.KeyValue) (jetstream.KeyWatcher, error) {
			return kv.WatchAll(ctx, jetstream.IgnoreDeletes())
		}}, false},
		{watch{"WatchAll resume from 3", func(kv jetstream.KeyValue) (jetstream.KeyWatcher, error) {
			return kv.WatchAll(ctx, jetstream.ResumeFromRevision(3))
		}}, false},
		{watch{"WatchFiltered(size, gone)", func(kv jetstream.KeyValue) (jetstream.KeyWatcher, error) {
			return kv.WatchFiltered(ctx, []string{"size", "gone"})
		}}, false},
		{watch{"WatchAll updates only", func(kv jetstream.KeyValue) (jetstream.KeyWatcher, error) {
			return kv.WatchAll(ctx, jetstream.UpdatesOnly())
		}}, true},
	}
	type open struct{ real, eddy jetstream.KeyWatcher }
	var opened []open
	for _, w := range watches {
		rw, err := w.open(p.real)
		if err != nil {
			t.Fatalf("%s on nats-server: %v", w.name, err)
		}
		ew, err := w.open(p.eddy)
		if err != nil {
			t.Fatalf("%s on eddy: %v", w.name, err)
		}
		opened = append(opened, open{rw, ew})
		if a, b := initial(rw, w.updatesOnly), initial(ew, w.updatesOnly); !slices.Equal(a, b) {
			t.Errorf("%s initial values:\nnats-server %q\neddy        %q", w.name, a, b)
		}
	}
	// A live update, written through RESP to Eddy and kv.Put to the real
	// server, reaches every watcher that covers it.
	p.put("size", "XL")
	for i, w := range watches {
		if w.name == "Watch(color)" || w.name == "Watch(shape.*) history" {
			continue
		}
		if a, b := next(opened[i].real), next(opened[i].eddy); a != b {
			t.Errorf("%s live update:\nnats-server %s\neddy        %s", w.name, a, b)
		}
	}
	p.put("color", "black")
	for i, w := range watches {
		if w.name != "Watch(color)" {
			continue
		}
		if a, b := next(opened[i].real), next(opened[i].eddy); a != b {
			t.Errorf("%s live update:\nnats-server %s\neddy        %s", w.name, a, b)
		}
	}
	for _, o := range opened {
		o.real.Stop()
		o.eddy.Stop()
	}

	// Deleted entries are skipped: revision 1 (color=blue) removed by
	// XDEL in Eddy and by a message delete in JetStream.
	rs, err := p.rjs.Stream(ctx, "KV_cfg")
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.DeleteMsg(ctx, 1); err != nil {
		t.Fatal(err)
	}
	rc := p.eddyProc.Client()
	first, err := rc.XRange(ctx, "KV_cfg", "-", "+").Result()
	if err != nil || len(first) == 0 {
		t.Fatalf("XRANGE: %v %v", first, err)
	}
	if err := rc.XDel(ctx, "KV_cfg", first[0].ID).Err(); err != nil {
		t.Fatal(err)
	}
	if a, b := history(p.real, "color"), history(p.eddy, "color"); !slices.Equal(a, b) {
		t.Errorf("History(color) after a delete:\nnats-server %q\neddy        %q", a, b)
	}
	for _, w := range watches[3:4] { // WatchAll history
		rw, err := w.open(p.real)
		if err != nil {
			t.Fatal(err)
		}
		ew, err := w.open(p.eddy)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := initial(rw, false), initial(ew, false); !slices.Equal(a, b) {
			t.Errorf("%s after a delete:\nnats-server %q\neddy        %q", w.name, a, b)
		}
		rw.Stop()
		ew.Stop()
	}
}

// TestNATSKVConsumerReplies sends the same CONSUMER.CREATE, INFO and
// DELETE requests to a real nats-server and to Eddy and compares the
// JSON replies field by field; creation and report times are masked.
func TestNATSKVConsumerReplies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := startKVPair(t, ctx)
	p.put("size", "L")
	p.put("color", "red")

	const api = "$JS.API."
	request := func(nc *nats.Conn, subject, body string, mask []string) string {
		t.Helper()
		m, err := nc.RequestWithContext(ctx, subject, []byte(body))
		if err != nil {
			return "error: " + err.Error()
		}
		return maskJSON(t, m.Data, append([]string{"created", "ts", "last_active"}, mask...)...)
	}
	compare := func(subject, body string, mask ...string) {
		t.Helper()
		if a, b := request(p.rnc, subject, body, mask), request(p.enc, subject, body, mask); a != b {
			t.Errorf("%s %s:\nnats-server %s\neddy        %s", subject, body, a, b)
		}
	}
	// Each consumer delivers to an inbox with a subscriber on both
	// sides, as nats.go's would (push_bound).
	deliver := func(name string) string {
		subj := "_INBOX.kvdiff." + name
		for _, nc := range []*nats.Conn{p.rnc, p.enc} {
			if _, err := nc.SubscribeSync(subj); err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		return subj
	}
	create := func(name, filter, cfg string) {
		t.Helper()
		subject := api + "CONSUMER.CREATE.KV_cfg." + name
		if filter != "" {
			subject += "." + filter
		}
		compare(subject, fmt.Sprintf(`{"stream_name":"KV_cfg","config":{%s,"deliver_subject":%q}}`, cfg, deliver(name)))
	}
	hist := `"deliver_policy":"all","ack_policy":"none","ack_wait":79200000000000,"max_deliver":1,"filter_subject":"$KV.cfg.color","replay_policy":"instant","flow_control":true,"idle_heartbeat":5000000000,"num_replicas":1,"mem_storage":true`
	create("hist", "$KV.cfg.color", hist)
	create("keys", "$KV.cfg.>", `"deliver_policy":"last_per_subject","ack_policy":"none","ack_wait":79200000000000,"max_deliver":1,"filter_subject":"$KV.cfg.>","replay_policy":"instant","flow_control":true,"idle_heartbeat":5000000000,"headers_only":true,"num_replicas":1,"mem_storage":true`)
	create("new", "", `"deliver_policy":"new","ack_policy":"none","replay_policy":"instant"`)
	create("last", "$KV.cfg.size", `"deliver_policy":"last","ack_policy":"none","filter_subject":"$KV.cfg.size"`)
	create("start", "", `"deliver_policy":"by_start_sequence","opt_start_seq":2,"ack_policy":"none","filter_subjects":["$KV.cfg.color","$KV.cfg.size"],"inactive_threshold":2000000000`)
	// The legacy ephemeral form: the server names the consumer.
	compare(api+"CONSUMER.CREATE.KV_cfg", fmt.Sprintf(`{"stream_name":"KV_cfg","config":{%s,"deliver_subject":%q}}`, hist, deliver("legacy")), "name")
	// Refused alike.
	create("nostart", "", `"deliver_policy":"by_start_sequence","ack_policy":"none"`)
	create("mismatch", "$KV.cfg.size", `"deliver_policy":"all","ack_policy":"none","filter_subject":"$KV.cfg.color"`)
	create("both", "", `"deliver_policy":"all","ack_policy":"none","filter_subject":"$KV.cfg.color","filter_subjects":["$KV.cfg.size"]`)
	create("lps", "", `"deliver_policy":"last_per_subject","ack_policy":"none"`)
	create("fc", "", `"deliver_policy":"all","ack_policy":"none","flow_control":true`)
	compare(api+"CONSUMER.CREATE.KV_cfg.x", `{"stream_name":"KV_other","config":{"ack_policy":"none","deliver_subject":"_INBOX.kvdiff.x"}}`)
	compare(api+"CONSUMER.CREATE.KV_nosuch.x", `{"stream_name":"KV_nosuch","config":{"ack_policy":"none","deliver_subject":"_INBOX.kvdiff.x"}}`)
	compare(api+"CONSUMER.CREATE.KV_cfg.x", `{"stream_name":"KV_cfg","config":{"ack_policy":"none","deliver_subject":"_INBOX.kvdiff.*"}}`)
	compare(api+"CONSUMER.CREATE.KV_cfg.x", `{"stream_name":"KV_cfg","config":{"ack_policy":"none","bogus":1}}`)
	compare(api+"CONSUMER.CREATE.KV_cfg", `{"stream_name":"KV_cfg","config":{"durable_name":"d","ack_policy":"none","deliver_subject":"_INBOX.kvdiff.x"}}`)

	compare(api+"CONSUMER.INFO.KV_cfg.hist", ``)
	compare(api+"CONSUMER.INFO.KV_cfg.nosuch", ``)
	compare(api+"CONSUMER.INFO.KV_nosuch.hist", ``)
	compare(api+"CONSUMER.DELETE.KV_cfg.hist", `{"x":1}`)
	compare(api+"CONSUMER.DELETE.KV_cfg.hist", ``)
	compare(api+"CONSUMER.DELETE.KV_cfg.hist", ``)
	compare(api+"CONSUMER.DELETE.KV_nosuch.hist", ``)

	// What a real server creates but Eddy cannot serve is refused with
	// an error the client understands.
	for _, cfg := range []string{
		`{"stream_name":"KV_cfg","config":{"name":"pull","ack_policy":"explicit"}}`,
		`{"stream_name":"KV_cfg","config":{"name":"ack","ack_policy":"explicit","deliver_subject":"_INBOX.kvdiff.ack"}}`,
		`{"stream_name":"KV_cfg","config":{"durable_name":"dur","ack_policy":"none","deliver_subject":"_INBOX.kvdiff.dur"}}`,
		`{"stream_name":"KV_cfg","config":{"name":"grp","ack_policy":"none","deliver_subject":"_INBOX.kvdiff.grp","deliver_group":"g"}}`,
		`{"stream_name":"KV_cfg","config":{"name":"time","deliver_policy":"by_start_time","opt_start_time":"2024-01-01T00:00:00Z","ack_policy":"none","deliver_subject":"_INBOX.kvdiff.time"}}`,
	} {
		var req struct {
			Config struct {
				Name    string `json:"name"`
				Durable string `json:"durable_name"`
			} `json:"config"`
		}
		if err := json.Unmarshal([]byte(cfg), &req); err != nil {
			t.Fatal(err)
		}
		name := req.Config.Name + req.Config.Durable
		m, err := p.enc.RequestWithContext(ctx, api+"CONSUMER.CREATE.KV_cfg."+name, []byte(cfg))
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		var resp struct {
			Error *struct {
				Code    int `json:"code"`
				ErrCode int `json:"err_code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(m.Data, &resp); err != nil || resp.Error == nil || resp.Error.Code != 500 || resp.Error.ErrCode != 10012 {
			t.Errorf("%s: got %s, want error 10012", cfg, m.Data)
		}
	}
}

// TestNATSKVExternalRefused: joined to an existing NATS (--nats-url), the
// bridge has no leafnode connection to push through, so the KV readers
// that need a consumer get an error that says so instead of silence.
func TestNATSKVExternalRefused(t *testing.T) {
	if againstRedis {
		t.Skip("the NATS bridge has no Redis counterpart")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	external := startNATS(t, true)
	eddy := startEddy(t, "--nats-port", "0", "--nats-url", external.ClientURL())
	if err := eddy.Client().Do(ctx, "XADD", "KV_cfg", "*", "subject", "$KV.cfg.color", "data", "blue").Err(); err != nil {
		t.Fatal(err)
	}
	kv := bindKV(t, ctx, external.ClientURL(), "eddy", "cfg")
	if e, err := kv.Get(ctx, "color"); err != nil || string(e.Value()) != "blue" {
		t.Errorf("Get = %v, %v", e, err)
	}
	const want = "push consumers are not available on this Eddy bridge"
	if _, err := kv.History(ctx, "color"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("History error %v, want one containing %q", err, want)
	}
}

// TestNATSKVExternalLeaf: joined to an existing NATS that has a leafnode
// listener, with --nats-leaf-url, the bridge pushes consumers' messages
// through it, so the KV readers work under the bridge's domain, and an
// XADD reaches a watcher.
func TestNATSKVExternalLeaf(t *testing.T) {
	if againstRedis {
		t.Skip("the NATS bridge has no Redis counterpart")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var opts *natsserver.Options
	external := startNATS(t, false, func(o *natsserver.Options) {
		o.LeafNode.Host, o.LeafNode.Port = "127.0.0.1", -1
		o.LeafNode.Username, o.LeafNode.Password = "leaf", "s3cret"
		opts = o
	})
	leafURL := fmt.Sprintf("nats://leaf:s3cret@127.0.0.1:%d", opts.LeafNode.Port)
	eddy := startEddy(t, "--nats-port", "0", "--nats-url", external.ClientURL(), "--nats-leaf-url", leafURL)
	c := eddy.Client()
	for _, v := range []string{"red", "blue"} {
		if err := c.Do(ctx, "XADD", "KV_cfg", "*", "subject", "$KV.cfg.color", "data", v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	kv := bindKV(t, ctx, external.ClientURL(), "eddy", "cfg")
	h, err := kv.History(ctx, "color")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range h {
		got = append(got, kvEntry(e))
	}
	want := []string{`color="red" rev=1 op=KeyValuePutOp delta=1`, `color="blue" rev=2 op=KeyValuePutOp delta=0`}
	if !slices.Equal(got, want) {
		t.Fatalf("History through the external server's leafnode:\n got %q\nwant %q", got, want)
	}
	w, err := kv.Watch(ctx, "color", jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := c.Do(ctx, "XADD", "KV_cfg", "*", "subject", "$KV.cfg.color", "data", "green").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w.Updates():
		if e == nil || string(e.Value()) != "green" || e.Revision() != 3 {
			t.Fatalf("watcher got %s, want green at revision 3", kvEntry(e))
		}
	case <-ctx.Done():
		t.Fatal("the watcher never saw the XADD")
	}
}

// bindKV connects to url and binds KV bucket under JetStream domain.
func bindKV(t *testing.T, ctx context.Context, url, domain, bucket string) jetstream.KeyValue {
	t.Helper()
	js, err := jetstream.NewWithDomain(natsConnect(t, url), domain)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}
