package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/stream"
	"github.com/nats-io/nats-server/v2/server"
)

// fakeStore holds streams in memory; subjects match filters with
// nats-server's own SubjectsCollide, which for a literal subject is
// "matches".
type fakeStore struct {
	streams map[string][]stream.SeqEntry // live entries in sequence order
	added   map[string]uint64
	other   map[string]bool // keys of another type
	err     error
}

func (f *fakeStore) add(name string, ms uint64, fields ...string) {
	if f.streams == nil {
		f.streams, f.added = map[string][]stream.SeqEntry{}, map[string]uint64{}
	}
	f.added[name]++
	e := stream.SeqEntry{Seq: f.added[name], ID: stream.ID{Ms: ms}, Subject: []byte(name)}
	for i, s := range fields {
		e.Fields = append(e.Fields, []byte(s))
		if i%2 == 0 && s == "subject" && e.Subject != nil && string(e.Subject) == name {
			e.Subject = []byte(fields[i+1])
		}
	}
	f.streams[name] = append(f.streams[name], e)
}

func (f *fakeStore) State(name string) (stream.SeqState, bool, error) {
	es, ok := f.streams[name]
	if f.err != nil || !ok {
		return stream.SeqState{}, false, f.err
	}
	st := stream.SeqState{Messages: uint64(len(es)), LastSeq: f.added[name], FirstSeq: f.added[name] + 1}
	if len(es) > 0 {
		st.FirstSeq, st.FirstID, st.LastID = es[0].Seq, es[0].ID, es[len(es)-1].ID
		for _, e := range es {
			for _, b := range e.Fields {
				st.Bytes += uint64(len(b))
			}
		}
	}
	return st, true, nil
}

func (f *fakeStore) BySeq(name string, seq uint64) (stream.SeqEntry, bool, error) {
	for _, e := range f.streams[name] {
		if e.Seq == seq {
			return e, true, f.err
		}
	}
	return stream.SeqEntry{}, false, f.err
}

func matches(subject []byte, filter string) bool {
	return filter == "" || server.SubjectsCollide(string(subject), filter)
}

func (f *fakeStore) NextBySubject(name string, from uint64, filter string) (stream.SeqEntry, bool, error) {
	for _, e := range f.streams[name] {
		if e.Seq >= from && matches(e.Subject, filter) {
			return e, true, f.err
		}
	}
	return stream.SeqEntry{}, false, f.err
}

func (f *fakeStore) LastBySubject(name string, filter string) (stream.SeqEntry, bool, error) {
	es := f.streams[name]
	for i := len(es) - 1; i >= 0; i-- {
		if matches(es[i].Subject, filter) {
			return es[i], true, f.err
		}
	}
	return stream.SeqEntry{}, false, f.err
}

func (f *fakeStore) Scan(name string, from uint64, fn func(stream.SeqEntry) bool) error {
	for _, e := range f.streams[name] {
		if e.Seq >= from && !fn(e) {
			break
		}
	}
	return f.err
}

func (f *fakeStore) SeqFromTime(name string, t time.Time) (uint64, bool, error) {
	es, ok := f.streams[name]
	if !ok {
		return 0, false, f.err
	}
	for _, e := range es {
		if !time.UnixMilli(int64(e.ID.Ms)).Before(t) {
			return e.Seq, true, f.err
		}
	}
	return f.added[name] + 1, true, f.err
}

// reply is one message a request was answered with.
type reply struct{ hdr, data []byte }

type collect []reply

func (c *collect) send(hdr, data []byte) { *c = append(*c, reply{hdr, data}) }

// serveAll is every reply to one request.
func serveAll(a *api, subject string, hdr, req []byte) []reply {
	var c collect
	a.respond(subject, hdr, req, &c)
	return c
}

// serveOne is the reply to a request answered with at most one message.
func serveOne(a *api, subject string, hdr, req []byte) (rhdr, rdata []byte) {
	r := serveAll(a, subject, hdr, req)
	switch len(r) {
	case 0:
		return nil, nil
	case 1:
		return r[0].hdr, r[0].data
	}
	panic(fmt.Sprintf("%s %s: %d replies", subject, req, len(r)))
}

func (f *fakeStore) Subjects(name string, max int) ([]string, bool, error) {
	var out []string
	seen := map[string]bool{}
	for _, e := range f.streams[name] {
		if !seen[string(e.Subject)] {
			seen[string(e.Subject)] = true
			out = append(out, string(e.Subject))
		}
	}
	return out, len(out) <= max, f.err
}

func (f *fakeStore) Streams(fn func([]byte)) error {
	for k := range f.streams {
		fn([]byte(k))
	}
	for k := range f.other {
		fn([]byte(k)) // as a broken store would; names() must still check
	}
	return f.err
}

// adrStore is ADR-31's example: stream "stream", six messages to s1, s2
// alternating.
func adrStore() *fakeStore {
	f := &fakeStore{}
	for i := range 6 {
		subj := []string{"s1", "s2"}[i%2]
		f.add("stream", 1700000000000+uint64(i), "subject", subj, "data", "m"+string(rune('1'+i)))
	}
	return f
}

func testAPI(f Store) *api {
	return &api{store: f, prefix: "$JS.API.", log: slog.New(slog.DiscardHandler),
		now: func() time.Time { return time.Unix(1800000000, 0) }}
}

// TestDirectGetADR is ADR-31's example table, both halves.
func TestDirectGetADR(t *testing.T) {
	a := testAPI(adrStore())
	found := []struct {
		req, subj string
		seq       string
	}{
		{`{"seq":1}`, "s1", "1"},
		{`{"last_by_subj":"s1"}`, "s1", "5"},
		{`{"last_by_subj":"s2"}`, "s2", "6"},
		{`{"next_by_subj":"s1"}`, "s1", "1"},
		{`{"next_by_subj":"s2"}`, "s2", "2"},
		{`{"seq":1,"next_by_subj":"s1"}`, "s1", "1"},
		{`{"seq":1,"next_by_subj":"s2"}`, "s2", "2"},
		{`{"seq":2,"next_by_subj":"s1"}`, "s1", "3"},
		{`{"seq":2,"next_by_subj":"s2"}`, "s2", "2"},
		{`{"seq":5,"next_by_subj":"s1"}`, "s1", "5"},
		{`{"seq":5,"next_by_subj":"s2"}`, "s2", "6"},
		{`{"last_by_subj":"*"}`, "s2", "6"},
		{`{"seq":3,"next_by_subj":">"}`, "s1", "3"},
	}
	for _, tc := range found {
		hdr, data := serveOne(a, "$JS.API.DIRECT.GET.stream", nil, []byte(tc.req))
		want := "NATS/1.0\r\nNats-Stream: stream\r\nNats-Subject: " + tc.subj + "\r\nNats-Sequence: " + tc.seq + "\r\nNats-Time-Stamp: "
		if !strings.HasPrefix(string(hdr), want) || !strings.HasSuffix(string(hdr), "Z\r\n\r\n") {
			t.Errorf("%s: header %q, want prefix %q", tc.req, hdr, want)
		}
		if wantData := "m" + tc.seq; string(data) != wantData {
			t.Errorf("%s: payload %q, want %q", tc.req, data, wantData)
		}
	}
	status := []struct{ subject, req, want string }{
		{"$JS.API.DIRECT.GET.stream", ``, "408 Empty Request"},
		{"$JS.API.DIRECT.GET.stream", `{}`, "408 Empty Request"},
		{"$JS.API.DIRECT.GET.stream", `{"seq":0}`, "408 Empty Request"},
		{"$JS.API.DIRECT.GET.stream", `{"seq":9}`, "404 Message Not Found"},
		{"$JS.API.DIRECT.GET.stream.not-a-subject", ``, "404 Message Not Found"},
		{"$JS.API.DIRECT.GET.stream", `{"next_by_subj":"not-a-subject"}`, "404 Message Not Found"},
		{"$JS.API.DIRECT.GET.stream", `{"seq":9,"next_by_subj":"s1"}`, "404 Message Not Found"},
		{"$JS.API.DIRECT.GET.stream", `{"seq":1,"next_by_subj":"not-a-subject"}`, "404 Message Not Found"},
		{"$JS.API.DIRECT.GET.stream", `{"seq":1,"last_by_subj":"s1"}`, "408 Bad Request"},
		{"$JS.API.DIRECT.GET.stream", `{"last_by_subj":"s1","next_by_subj":"s1"}`, "408 Bad Request"},
		{"$JS.API.DIRECT.GET.stream", `nope`, "408 Malformed Request"},
		{"$JS.API.DIRECT.GET.stream.s1", `{"seq":1}`, "408 Bad Request"},
		{"$JS.API.DIRECT.GET.stream.s1", `nope`, "408 Malformed Request"},
		{"$JS.API.DIRECT.GET.stream", `{"last_by_subj":"s1","batch":2}`, "408 Bad Request"},
		{"$JS.API.DIRECT.GET.stream", `{"multi_last":["s1"],"up_to_seq":1,"up_to_time":"2020-01-01T00:00:00Z"}`, "408 Bad Request"},
		{"$JS.API.DIRECT.GET.stream", `{"multi_last":["nope"]}`, "404 No Results"},
		{"$JS.API.DIRECT.GET.nosuch", `{"seq":1}`, "503\r\nNats-Subject: $JS.API.DIRECT.GET.nosuch"},
		{"$JS.API.DIRECT.GET.nosuch", `{}`, "503\r\nNats-Subject: $JS.API.DIRECT.GET.nosuch"},
		{"$JS.API.DIRECT.GET.nosuch.s1", ``, "503\r\nNats-Subject: $JS.API.DIRECT.GET.nosuch.s1"},
	}
	for _, tc := range status {
		hdr, data := serveOne(a, tc.subject, nil, []byte(tc.req))
		if want := "NATS/1.0 " + tc.want + "\r\n\r\n"; string(hdr) != want || len(data) != 0 {
			t.Errorf("%s %s: got %q %q, want %q", tc.subject, tc.req, hdr, data, want)
		}
	}
	// The shortcut is last-by-subject with an empty payload.
	hdr, data := serveOne(a, "$JS.API.DIRECT.GET.stream.s1", nil, nil)
	if !strings.Contains(string(hdr), "Nats-Sequence: 5\r\n") || string(data) != "m5" {
		t.Errorf("shortcut: %q %q", hdr, data)
	}
	// no_hdr leaves the headers out entirely.
	if hdr, data := serveOne(a, "$JS.API.DIRECT.GET.stream", nil, []byte(`{"seq":2,"no_hdr":true}`)); hdr != nil || string(data) != "m2" {
		t.Errorf("no_hdr: %q %q", hdr, data)
	}
}

func TestDirectGetHeadersFromFields(t *testing.T) {
	f := &fakeStore{}
	f.add("orders", 1700000000123, "subject", "orders.new", "data", "{}", "Trace-Id", "a\r\nb", "bad key", "x", "KV-Operation", "DEL")
	f.add("orders", 1700000000124, "k", "v") // no subject, no data
	a := testAPI(f)
	hdr, data := serveOne(a, "$JS.API.DIRECT.GET.orders", nil, []byte(`{"seq":1}`))
	want := "NATS/1.0\r\nTrace-Id: a  b\r\nKV-Operation: DEL\r\nNats-Stream: orders\r\nNats-Subject: orders.new\r\n" +
		"Nats-Sequence: 1\r\nNats-Time-Stamp: 2023-11-14T22:13:20.123Z\r\n\r\n"
	if string(hdr) != want || string(data) != "{}" {
		t.Errorf("got %q %q\nwant %q", hdr, data, want)
	}
	hdr, data = serveOne(a, "$JS.API.DIRECT.GET.orders.orders", nil, nil)
	if !strings.HasPrefix(string(hdr), "NATS/1.0\r\nk: v\r\nNats-Stream: orders\r\nNats-Subject: orders\r\nNats-Sequence: 2\r\n") || len(data) != 0 {
		t.Errorf("entry without subject/data: %q %q", hdr, data)
	}
}

func apiError(t *testing.T, data []byte) (int, uint16) {
	t.Helper()
	var r struct {
		Type  string           `json:"type"`
		Error *server.ApiError `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("reply %q: %v", data, err)
	}
	if r.Error == nil {
		return 0, 0
	}
	return r.Error.Code, r.Error.ErrCode
}

func TestMsgGet(t *testing.T) {
	a := testAPI(adrStore())
	tests := []struct {
		subject, req string
		code         int
		errCode      uint16
		seq          uint64
	}{
		{"stream", `{}`, 400, 10003, 0},
		{"stream", ``, 400, 10003, 0},
		{"stream", `{"seq":0}`, 400, 10003, 0},
		{"stream", `{"seq":9}`, 404, 10037, 0},
		{"stream", `{"last_by_subj":"not-a-subject"}`, 404, 10037, 0},
		{"stream", `{"next_by_subj":"not-a-subject"}`, 404, 10037, 0},
		{"stream", `{"seq":9,"next_by_subj":"s1"}`, 404, 10037, 0},
		{"stream", `{"seq":1,"next_by_subj":"not-a-subject"}`, 404, 10037, 0},
		{"stream", `{"seq":1,"bogus":1}`, 400, 10025, 0},
		{"stream", `{"seq":1,"batch":2}`, 400, 10003, 0},
		{"nosuch", `{"seq":1}`, 404, 10059, 0},
		{"nosuch", `{}`, 400, 10003, 0}, // the server checks the request first
		{"stream", `{"seq":4}`, 0, 0, 4},
		{"stream", `{"last_by_subj":"s1"}`, 0, 0, 5},
		{"stream", `{"seq":2,"next_by_subj":"s1"}`, 0, 0, 3},
	}
	for _, tc := range tests {
		_, data := serveOne(a, "$JS.API.STREAM.MSG.GET."+tc.subject, nil, []byte(tc.req))
		code, errCode := apiError(t, data)
		if code != tc.code || errCode != tc.errCode {
			t.Errorf("%s %s: error %d/%d, want %d/%d (%s)", tc.subject, tc.req, code, errCode, tc.code, tc.errCode, data)
			continue
		}
		if tc.seq != 0 {
			var r server.JSApiMsgGetResponse
			if err := json.Unmarshal(data, &r); err != nil || r.Message == nil || r.Message.Sequence != tc.seq ||
				string(r.Message.Data) != "m"+string(rune('0'+tc.seq)) || r.Type != server.JSApiMsgGetResponseType {
				t.Errorf("%s: %s", tc.req, data)
			}
		}
	}
}

func TestStreamInfoNamesList(t *testing.T) {
	f := adrStore()
	f.add("KV_cfg", 1700000000000, "subject", "$KV.cfg.a", "data", "1")
	f.add("bad.name", 1, "data", "x")
	f.other = map[string]bool{"has space": true}
	a := testAPI(f)

	_, data := serveOne(a, "$JS.API.STREAM.INFO.stream", nil, nil)
	var r server.JSApiStreamInfoResponse
	if err := json.Unmarshal(data, &r); err != nil || r.StreamInfo == nil {
		t.Fatalf("info: %s %v", data, err)
	}
	si := r.StreamInfo
	if !si.Config.AllowDirect || si.Config.Name != "stream" || si.State.Msgs != 6 || si.State.FirstSeq != 1 ||
		si.State.LastSeq != 6 || si.State.LastTime != time.UnixMilli(1700000000005).UTC() {
		t.Errorf("info: %s", data)
	}
	if code, ec := apiError(t, mustServe(a, "$JS.API.STREAM.INFO.nosuch", "")); code != 404 || ec != 10059 {
		t.Errorf("missing stream info: %d %d", code, ec)
	}
	_, data = serveOne(a, "$JS.API.STREAM.INFO.KV_cfg", nil, nil)
	if err := json.Unmarshal(data, &r); err != nil || r.StreamInfo.Config.MaxMsgsPer < 1 || r.StreamInfo.Config.Subjects[0] != "$KV.cfg.>" {
		t.Errorf("KV info: %s", data)
	}

	var names server.JSApiStreamNamesResponse
	if err := json.Unmarshal(mustServe(a, "$JS.API.STREAM.NAMES", ""), &names); err != nil ||
		strings.Join(names.Streams, ",") != "KV_cfg,stream" || names.Total != 2 {
		t.Errorf("names: %+v %v", names, err)
	}
	if err := json.Unmarshal(mustServe(a, "$JS.API.STREAM.NAMES", `{"subject":"$KV.cfg.a"}`), &names); err != nil ||
		strings.Join(names.Streams, ",") != "KV_cfg" {
		t.Errorf("names by subject: %+v %v", names, err)
	}
	var list server.JSApiStreamListResponse
	if err := json.Unmarshal(mustServe(a, "$JS.API.STREAM.LIST", `{"offset":1}`), &list); err != nil ||
		len(list.Streams) != 1 || list.Streams[0].Config.Name != "stream" || list.Total != 2 || list.Offset != 1 {
		t.Errorf("list: %+v %v", list, err)
	}
	var info server.JSApiAccountInfoResponse
	if err := json.Unmarshal(mustServe(a, "$JS.API.INFO", ""), &info); err != nil || info.JetStreamAccountStats == nil ||
		info.Streams != 2 || info.API.Level != server.JSApiLevel {
		t.Errorf("account info: %+v %v", info, err)
	}
}

func mustServe(a *api, subject, req string) []byte {
	_, data := serveOne(a, subject, nil, []byte(req))
	return data
}

func TestDomainAndStoreErrors(t *testing.T) {
	f := adrStore()
	a := testAPI(f)
	a.prefix, a.domain = "$JS.hub.API.", "hub"
	if hdr, _ := serveOne(a, "$JS.API.DIRECT.GET.stream", nil, []byte(`{"seq":1}`)); hdr != nil {
		t.Errorf("answered outside its domain: %q", hdr)
	}
	if hdr, _ := serveOne(a, "$JS.hub.API.DIRECT.GET.stream", nil, []byte(`{"seq":1}`)); !strings.Contains(string(hdr), "Nats-Sequence: 1\r\n") {
		t.Errorf("domain direct get: %q", hdr)
	}
	f.err = errors.New("disk on fire")
	if hdr, _ := serveOne(a, "$JS.hub.API.DIRECT.GET.stream", nil, []byte(`{"seq":1}`)); string(hdr) != "NATS/1.0 500 disk on fire\r\n\r\n" {
		t.Errorf("store error: %q", hdr)
	}
	if code, _ := apiError(t, mustServe(a, "$JS.hub.API.STREAM.INFO.stream", "")); code != 500 {
		t.Errorf("store error in info: %d", code)
	}
}

func TestSeqOnlyRequest(t *testing.T) {
	for _, tc := range []struct {
		body string
		seq  uint64
		ok   bool
	}{
		{`{"seq":1}`, 1, true},
		{`{"seq":0}`, 0, true},
		{`{"seq":18446744073709551615}`, 18446744073709551615, true},
		{`{"seq":18446744073709551616}`, 0, false}, // overflow: the decoder's error
		{`{"seq":01}`, 0, false},
		{`{"seq":}`, 0, false},
		{`{"seq":1 }`, 0, false},
		{`{"seq":-1}`, 0, false},
		{`{"seq":1,"batch":2}`, 0, false},
		{` {"seq":1}`, 0, false},
	} {
		seq, ok := seqOnlyRequest([]byte(tc.body))
		if seq != tc.seq || ok != tc.ok {
			t.Errorf("%s: %d %v, want %d %v", tc.body, seq, ok, tc.seq, tc.ok)
		}
		// Whatever the fast path accepts, the decoder reads the same.
		var req server.JSApiMsgGetRequest
		if ok && (json.Unmarshal([]byte(tc.body), &req) != nil || req.Seq != seq) {
			t.Errorf("%s: the decoder reads %d", tc.body, req.Seq)
		}
	}
}

func TestRequiredApiLevel(t *testing.T) {
	level := strconv.Itoa(server.JSApiLevel)
	above := strconv.Itoa(server.JSApiLevel + 1)
	for _, tc := range []struct {
		hdr  string
		want bool
	}{
		{"", false},
		{"NATS/1.0\r\n\r\n", false},
		{"NATS/1.0\r\nNats-Required-Api-Level: " + level + "\r\n\r\n", false},
		{"NATS/1.0\r\nNats-Required-Api-Level: 0\r\n\r\n", false},
		{"NATS/1.0\r\nNats-Required-Api-Level: " + above + "\r\n\r\n", true},
		{"NATS/1.0\r\nNats-Required-Api-Level:" + above + "\r\n\r\n", true},
		{"NATS/1.0\r\nNats-Required-Api-Level: x\r\n\r\n", true},
		{"NATS/1.0\r\nNats-Required-Api-Level: \r\n\r\n", false}, // empty value: no requirement
		{"NATS/1.0\r\nnats-required-api-level: " + above + "\r\n\r\n", false},
		{"NATS/1.0\r\nX-Nats-Required-Api-Level: " + above + "\r\n\r\n", false},
	} {
		if got := errorOnRequiredApiLevel([]byte(tc.hdr)); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.hdr, got, tc.want)
		}
	}
	a := testAPI(adrStore())
	hdr := []byte("NATS/1.0\r\nNats-Required-Api-Level: " + above + "\r\n\r\n")
	if h, _ := serveOne(a, "$JS.API.DIRECT.GET.stream", hdr, []byte(`{"seq":1}`)); string(h) != "NATS/1.0 412 Required Api Level\r\n\r\n" {
		t.Errorf("direct get: %q", h)
	}
	for _, subject := range []string{"$JS.API.INFO", "$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST", "$JS.API.STREAM.INFO.stream", "$JS.API.STREAM.MSG.GET.stream"} {
		_, data := serveOne(a, subject, hdr, []byte(`{"seq":1}`))
		if code, ec := apiError(t, data); code != 412 || ec != 10185 {
			t.Errorf("%s: %d %d %s", subject, code, ec, data)
		}
	}
}

func TestConfigSubjects(t *testing.T) {
	f := &fakeStore{}
	f.add("plain", 1, "data", "x")
	f.add("plain", 2, "data", "y")
	f.add("mixed", 1, "data", "x")
	f.add("mixed", 2, "subject", "mixed.a.b", "data", "y")
	f.add("mixed", 3, "subject", "other", "data", "z")
	f.add("mixed", 4, "subject", "mixed.c", "data", "z")
	f.add("KV_b", 1, "subject", "$KV.b.k1", "data", "1")
	f.add("KV_b", 2, "subject", "$KV.b.k2", "data", "2")
	f.add("KV_b", 3, "subject", "$KV.b.k1", "data", "3")
	for i := range maxConfigSubjects + 1 {
		f.add("many", uint64(i), "subject", "m."+strconv.Itoa(i))
	}
	f.streams["empty"] = nil
	a := testAPI(f)
	for _, tc := range []struct {
		name string
		want string
		num  int
	}{
		{"plain", "plain", 1},
		{"mixed", "mixed,mixed.>,other", 4},
		{"KV_b", "$KV.b.>", 2},
		{"many", "many,many.>", 0},
		{"empty", "empty", 0},
	} {
		subjects, num, err := a.configSubjects(tc.name)
		if err != nil || strings.Join(subjects, ",") != tc.want || num != tc.num {
			t.Errorf("%s: %v %d %v, want %s %d", tc.name, subjects, num, err, tc.want, tc.num)
		}
	}
}

func TestInline(t *testing.T) {
	a := testAPI(adrStore())
	for _, tc := range []struct {
		subject, body string
		want          bool
	}{
		{"$JS.API.DIRECT.GET.s", `{"seq":1}`, true},
		{"$JS.API.DIRECT.GET.s", `{"last_by_subj":"a.b"}`, true},
		{"$JS.API.DIRECT.GET.s.a.b", ``, true},
		{"$JS.API.STREAM.MSG.GET.s", `{"seq":1}`, true},
		{"$JS.API.DIRECT.GET.s", `{"last_by_subj":"a.*"}`, false},
		{"$JS.API.DIRECT.GET.s.a.>", ``, false},
		{"$JS.API.DIRECT.GET.s", `{"seq":1,"batch":2}`, false},
		{"$JS.API.DIRECT.GET.s", `{"multi_last":["a"]}`, false},
		{"$JS.API.DIRECT.GET.s", `{"next_by_subj":"a"}`, false},
		{"$JS.API.DIRECT.GET.s", `{"start_time":"2020-01-01T00:00:00Z"}`, false},
		{"$JS.API.STREAM.INFO.s", ``, false},
		{"$JS.API.STREAM.NAMES", ``, false},
		{"$JS.API.CONSUMER.INFO.s.c", ``, false},
		{"$JS.other.API.DIRECT.GET.s", `{"seq":1}`, false},
	} {
		if got := a.inline(tc.subject, []byte(tc.body)); got != tc.want {
			t.Errorf("%s %s: inline %v, want %v", tc.subject, tc.body, got, tc.want)
		}
	}
}
