package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestNATSDirectGetDiff sends the same JetStream API requests to a real
// nats-server (JetStream, allow_direct) and to Eddy's bridge holding the
// same messages, and compares the replies byte for byte. What
// legitimately differs is masked: Nats-Time-Stamp and the JSON "time"
// (JetStream's publish time in nanoseconds, Eddy's entry ID
// milliseconds). ADR-31's example table is the first part of the list.
func TestNATSDirectGetDiff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eddy, eddyURL := startEddyNATS(t)
	truth := startNATS(t, true)

	// The truth: ADR-31's stream, six messages to s1 and s2 alternating,
	// and a stream whose message carries a header.
	nc := natsConnect(t, truth.ClientURL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []jetstream.StreamConfig{
		{Name: "stream", Subjects: []string{"s1", "s2"}, AllowDirect: true},
		{Name: "orders", Subjects: []string{"orders", "orders.>"}, AllowDirect: true},
	} {
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	rc := eddy.Client()
	for i := range 6 {
		subj, data := []string{"s1", "s2"}[i%2], []string{"a", "b", "c", "d", "e", "f"}[i]
		if _, err := js.Publish(ctx, subj, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if err := rc.Do(ctx, "XADD", "stream", "*", "subject", subj, "data", data).Err(); err != nil {
			t.Fatal(err)
		}
	}
	msg := &nats.Msg{Subject: "orders.new", Data: []byte(`{"id":1}`), Header: nats.Header{"Trace-Id": []string{"t-1"}}}
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	if err := rc.Do(ctx, "XADD", "orders", "*", "subject", "orders.new", "data", `{"id":1}`, "Trace-Id", "t-1").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "orders", []byte("plain")); err != nil {
		t.Fatal(err)
	}
	if err := rc.Do(ctx, "XADD", "orders", "*", "data", "plain").Err(); err != nil {
		t.Fatal(err)
	}

	real, ours := dialRawNATS(t, truth.ClientURL()), dialRawNATS(t, eddyURL)
	const direct, get = "$JS.API.DIRECT.GET.", "$JS.API.STREAM.MSG.GET."
	type req struct{ subject, body string }
	reqs := []req{
		// ADR-31: Direct Get, found.
		{direct + "stream", `{"seq":1}`},
		{direct + "stream", `{"last_by_subj":"s1"}`},
		{direct + "stream", `{"last_by_subj":"s2"}`},
		{direct + "stream", `{"next_by_subj":"s1"}`},
		{direct + "stream", `{"seq":0,"next_by_subj":"s2"}`},
		{direct + "stream", `{"seq":1,"next_by_subj":"s1"}`},
		{direct + "stream", `{"seq":1,"next_by_subj":"s2"}`},
		{direct + "stream", `{"seq":2,"next_by_subj":"s1"}`},
		{direct + "stream", `{"seq":2,"next_by_subj":"s2"}`},
		{direct + "stream", `{"seq":5,"next_by_subj":"s1"}`},
		{direct + "stream", `{"seq":5,"next_by_subj":"s2"}`},
		// ADR-31: Direct Get, status replies.
		{direct + "stream", `{}`},
		{direct + "stream", `{"seq":0}`},
		{direct + "stream", `{"seq":9}`},
		{direct + "stream.not-a-subject", ``},
		{direct + "stream", `{"next_by_subj":"not-a-subject"}`},
		{direct + "stream", `{"seq":9,"next_by_subj":"s1"}`},
		{direct + "stream", `{"seq":1,"next_by_subj":"not-a-subject"}`},
		// ADR-31: the regular get.
		{get + "stream", `{}`},
		{get + "stream", `{"seq":0}`},
		{get + "stream", `{"seq":9}`},
		{get + "stream", `{"last_by_subj":"not-a-subject"}`},
		{get + "stream", `{"next_by_subj":"not-a-subject"}`},
		{get + "stream", `{"seq":9,"next_by_subj":"s1"}`},
		{get + "stream", `{"seq":1,"next_by_subj":"not-a-subject"}`},
		// More.
		{direct + "stream.s1", ``},
		{direct + "stream.s2", ``},
		{direct + "stream.*", ``},
		{direct + "stream.>", ``},
		{direct + "stream.s1", `{"seq":1}`},
		{direct + "stream.s1", `nope`},
		{direct + "stream", ``},
		{direct + "stream", `nope`},
		{direct + "stream", `{"seq":3,"last_by_subj":"s1"}`},
		{direct + "stream", `{"last_by_subj":"s1","next_by_subj":"s1"}`},
		{direct + "stream", `{"last_by_subj":"*"}`},
		{direct + "stream", `{"seq":3,"next_by_subj":">"}`},
		{direct + "stream", `{"seq":2,"no_hdr":true}`},
		{direct + "stream", `{"seq":4,"unknown_field":1}`},
		{direct + "nosuch", `{"seq":1}`},
		{direct + "nosuch.s1", ``},
		{direct + "orders", `{"seq":1}`},
		{direct + "orders", `{"seq":2}`},
		{direct + "orders.orders.new", ``},
		{direct + "orders", `{"next_by_subj":"orders.*"}`},
		{get + "stream", `{"seq":4}`},
		{get + "stream", `{"last_by_subj":"s2"}`},
		{get + "stream", `{"seq":2,"next_by_subj":"s1"}`},
		{get + "stream", `{"seq":1,"last_by_subj":"s1"}`},
		{get + "stream", `{"seq":1,"batch":2}`},
		{get + "stream", `{"seq":1,"bogus":true}`},
		{get + "stream", `{"seq":1`},
		{get + "stream", ``},
		{get + "orders", `{"seq":1}`},
		{get + "orders", `{"seq":2,"no_hdr":true}`},
		{get + "nosuch", `{"seq":1}`},
		{get + "nosuch", `{}`},
		{"$JS.API.STREAM.INFO.nosuch", ``},
		{"$JS.API.STREAM.INFO.stream", `{"bogus":1}`},
	}
	compare := func(r req) {
		t.Helper()
		rh, rd := real.request(r.subject, []byte(r.body))
		oh, od := ours.request(r.subject, []byte(r.body))
		if !bytes.Equal(maskTimes(rh), maskTimes(oh)) {
			t.Errorf("%s %s: header\nnats-server %q\neddy        %q", r.subject, r.body, rh, oh)
		}
		if len(rd) > 0 && rd[0] == '{' && len(od) > 0 {
			if a, b := maskJSON(t, rd, "time"), maskJSON(t, od, "time"); a != b {
				t.Errorf("%s %s: payload\nnats-server %s\neddy        %s", r.subject, r.body, a, b)
			}
		} else if !bytes.Equal(rd, od) {
			t.Errorf("%s %s: payload\nnats-server %q\neddy        %q", r.subject, r.body, rd, od)
		}
	}
	for _, r := range reqs {
		compare(r)
	}

	// Batches and multi_last answer with several messages and a closing
	// status (204 EOB, or 404 alone); every message is compared.
	const past, future = `"2000-01-01T00:00:00Z"`, `"2100-01-01T00:00:00Z"`
	compareAll := func(r req) {
		t.Helper()
		rr, or := real.requestAll(r.subject, []byte(r.body)), ours.requestAll(r.subject, []byte(r.body))
		if len(rr) != len(or) {
			t.Errorf("%s %s: %d replies from nats-server, %d from eddy\nnats-server %q\neddy        %q", r.subject, r.body, len(rr), len(or), rr, or)
			return
		}
		for i := range rr {
			if !bytes.Equal(maskTimes(rr[i][0]), maskTimes(or[i][0])) || !bytes.Equal(rr[i][1], or[i][1]) {
				t.Errorf("%s %s: reply %d\nnats-server %q %q\neddy        %q %q", r.subject, r.body, i, rr[i][0], rr[i][1], or[i][0], or[i][1])
			}
		}
	}
	multi := []req{
		{direct + "stream", `{"seq":1,"batch":3}`},
		{direct + "stream", `{"seq":5,"batch":5}`},
		{direct + "stream", `{"seq":2,"batch":2,"next_by_subj":"s1"}`},
		{direct + "stream", `{"next_by_subj":"s2","batch":10}`},
		{direct + "stream", `{"next_by_subj":"*","batch":2}`},
		{direct + "stream", `{"seq":1,"batch":3,"no_hdr":true}`},
		{direct + "stream", `{"seq":1,"batch":3,"max_bytes":3}`},
		{direct + "stream", `{"seq":1,"batch":3,"max_bytes":4}`},
		{direct + "stream", `{"seq":9,"batch":2}`},
		{direct + "stream", `{"seq":1,"batch":-1}`},
		{direct + "stream", `{"seq":2,"batch":1}`},
		{direct + "stream", `{"start_time":` + past + `,"batch":2}`},
		{direct + "stream", `{"start_time":` + future + `,"batch":2}`},
		{direct + "stream", `{"multi_last":["s1","s2"]}`},
		{direct + "stream", `{"multi_last":[">"]}`},
		{direct + "stream", `{"multi_last":["s1","s2"],"up_to_seq":3}`},
		{direct + "stream", `{"multi_last":["s1","s2"],"up_to_seq":99}`},
		{direct + "stream", `{"multi_last":["s1","s2"],"batch":1}`},
		{direct + "stream", `{"multi_last":["s1","s2"],"seq":6}`},
		{direct + "stream", `{"multi_last":["s1","s2"],"no_hdr":true}`},
		{direct + "stream", `{"multi_last":["*"],"max_bytes":1}`},
		{direct + "stream", `{"multi_last":["nope"]}`},
		{direct + "stream", `{"multi_last":["s1"],"up_to_time":` + past + `}`},
		{direct + "stream", `{"multi_last":["s1"],"up_to_time":` + future + `}`},
		{direct + "orders", `{"seq":1,"batch":2}`},
		{direct + "orders", `{"multi_last":["orders.>","orders"]}`},
	}
	for _, r := range multi {
		compareAll(r)
	}
	for _, r := range []req{
		{direct + "stream", `{"start_time":` + past + `}`},
		{direct + "stream", `{"start_time":` + future + `}`},
		{direct + "stream", `{"start_time":` + past + `,"next_by_subj":"s2"}`},
		{direct + "stream", `{"seq":1,"max_bytes":1}`},
		{direct + "stream", `{"multi_last":["s1"],"last_by_subj":"s1"}`},
		{direct + "stream", `{"multi_last":["s1"],"next_by_subj":"s1"}`},
		{direct + "stream", `{"multi_last":["s1"],"up_to_seq":1,"up_to_time":` + past + `}`},
		{direct + "stream.s1", `{"batch":2}`},
		{get + "stream", `{"start_time":` + past + `}`},
		{get + "stream", `{"start_time":` + future + `}`},
		{get + "stream", `{"start_time":` + past + `,"next_by_subj":"s2"}`},
		{get + "stream", `{"seq":1,"start_time":` + past + `}`},
	} {
		compare(r)
	}

	// Nats-Required-Api-Level: a level above the server's, or one it
	// cannot read, is refused; the server's own level or below is served.
	for _, level := range []string{"99", "x", "1", ""} {
		hdr := "NATS/1.0\r\nNats-Required-Api-Level: " + level + "\r\n\r\n"
		for _, r := range []req{
			{direct + "stream", `{"seq":1}`},
			{direct + "stream.s1", ``},
			{direct + "nosuch", `{"seq":1}`},
			{get + "stream", `{"seq":1}`},
			{get + "nosuch", `{"seq":1}`},
			{"$JS.API.STREAM.INFO.nosuch", ``},
			{"$JS.API.STREAM.NAMES", `{"subject":"nomatch.>"}`},
			{"$JS.API.STREAM.LIST", `{"subject":"nomatch.>"}`},
		} {
			rh, rd := real.requestHdr(r.subject, []byte(hdr), []byte(r.body))
			oh, od := ours.requestHdr(r.subject, []byte(hdr), []byte(r.body))
			if !bytes.Equal(maskTimes(rh), maskTimes(oh)) {
				t.Errorf("level %q %s %s: header\nnats-server %q\neddy        %q", level, r.subject, r.body, rh, oh)
			}
			if len(rd) > 0 && rd[0] == '{' && len(od) > 0 {
				if a, b := maskJSON(t, rd, "time"), maskJSON(t, od, "time"); a != b {
					t.Errorf("level %q %s %s: payload\nnats-server %s\neddy        %s", level, r.subject, r.body, a, b)
				}
			} else if !bytes.Equal(rd, od) {
				t.Errorf("level %q %s %s: payload\nnats-server %q\neddy        %q", level, r.subject, r.body, rd, od)
			}
		}
	}

	// Deleted messages leave gaps in the sequence on both sides.
	s, err := js.Stream(ctx, "stream")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMsg(ctx, 3); err != nil {
		t.Fatal(err)
	}
	ids, err := rc.XRange(ctx, "stream", "-", "+").Result()
	if err != nil || len(ids) != 6 {
		t.Fatalf("XRANGE: %v %v", ids, err)
	}
	if err := rc.XDel(ctx, "stream", ids[2].ID).Err(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []req{
		{direct + "stream", `{"seq":3}`},
		{direct + "stream", `{"seq":2,"next_by_subj":"s1"}`},
		{direct + "stream", `{"seq":3,"next_by_subj":"s1"}`},
		{get + "stream", `{"seq":3}`},
	} {
		compare(r)
	}
	for _, r := range []req{
		{direct + "stream", `{"seq":2,"batch":3}`},
		{direct + "stream", `{"seq":3,"batch":2}`},
		{direct + "stream", `{"seq":3,"batch":1,"next_by_subj":"s1"}`},
		{direct + "stream", `{"multi_last":["s1"],"up_to_seq":4}`},
		{direct + "stream", `{"multi_last":["s1","s2"],"up_to_seq":3}`},
	} {
		compareAll(r)
	}

	// STREAM.INFO: the state (but bytes, which count storage overhead)
	// and allow_direct agree.
	ri, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ejs, err := jetstream.New(natsConnect(t, eddyURL))
	if err != nil {
		t.Fatal(err)
	}
	es, err := ejs.Stream(ctx, "stream")
	if err != nil {
		t.Fatal(err)
	}
	// The subjects: config (the stored subjects, see configSubjects),
	// num_subjects, and the per-subject counts subjects_filter asks for,
	// with their paging fields.
	for _, r := range []req{
		{"$JS.API.STREAM.INFO.stream", ``},
		{"$JS.API.STREAM.INFO.stream", `{"subjects_filter":">"}`},
		{"$JS.API.STREAM.INFO.stream", `{"subjects_filter":"s1"}`},
		{"$JS.API.STREAM.INFO.stream", `{"subjects_filter":"nope"}`},
		{"$JS.API.STREAM.INFO.stream", `{"subjects_filter":">","offset":1}`},
		{"$JS.API.STREAM.INFO.orders", `{"subjects_filter":"orders.*"}`},
		{"$JS.API.STREAM.INFO.orders", ``},
	} {
		_, rd := real.request(r.subject, []byte(r.body))
		_, od := ours.request(r.subject, []byte(r.body))
		if a, b := subjectFields(t, rd), subjectFields(t, od); a != b {
			t.Errorf("%s %s:\nnats-server %s\neddy        %s", r.subject, r.body, a, b)
		}
	}

	ei := es.CachedInfo()
	if ei.State.Msgs != ri.State.Msgs || ei.State.FirstSeq != ri.State.FirstSeq || ei.State.LastSeq != ri.State.LastSeq ||
		ei.State.NumDeleted != ri.State.NumDeleted || ei.Config.AllowDirect != ri.Config.AllowDirect {
		t.Errorf("stream info state/config differ:\nnats-server %+v allow_direct=%v\neddy        %+v allow_direct=%v",
			ri.State, ri.Config.AllowDirect, ei.State, ei.Config.AllowDirect)
	}
}

// requestAll sends a request whose answer is several messages and
// returns them (header, payload) up to and including the first status
// reply ("NATS/1.0 <code>…"), which ends a batch.
func (r *rawNATS) requestAll(subject string, data []byte) [][2][]byte {
	r.t.Helper()
	var out [][2][]byte
	hdr, payload := r.request(subject, data)
	for {
		out = append(out, [2][]byte{hdr, payload})
		if bytes.HasPrefix(hdr, []byte("NATS/1.0 ")) || len(out) > 100 {
			return out
		}
		hdr, payload = r.next()
	}
}

// requestHdr is request with a header block.
func (r *rawNATS) requestHdr(subject string, hdr, data []byte) ([]byte, []byte) {
	r.t.Helper()
	r.c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(r.c, "HPUB %s %s.1 %d %d\r\n%s%s\r\n", subject, r.inbox, len(hdr), len(hdr)+len(data), hdr, data)
	return r.next()
}

// subjectFields picks from a STREAM.INFO reply what says which subjects
// the stream holds.
func subjectFields(t *testing.T, b []byte) string {
	t.Helper()
	var v struct {
		Config struct {
			Subjects []string `json:"subjects"`
		} `json:"config"`
		State struct {
			Subjects    map[string]uint64 `json:"subjects"`
			NumSubjects int               `json:"num_subjects"`
		} `json:"state"`
		Total  int `json:"total"`
		Offset int `json:"offset"`
		Limit  int `json:"limit"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("reply %q: %v", b, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
