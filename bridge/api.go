package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/eddy-streams/eddy/stream"
	"github.com/nats-io/nats-server/v2/server"
)

// api answers JetStream API requests from a Store. It knows nothing of
// connections: serve maps one request to one reply.
type api struct {
	store  Store
	prefix string // "$JS.API." or "$JS.<domain>.API."
	domain string
	log    *slog.Logger
	now    func() time.Time

	total, errs atomic.Uint64 // for $JS.API.INFO's api section
}

// kvHistory is what STREAM.INFO reports as max_msgs_per_subject for a
// KV_ stream: nats.go refuses to bind a bucket whose value is below 1,
// and 64 is the most history a KV client allows. Eddy keeps every entry.
const kvHistory = 64

// subscriptions are the subjects the bridge listens on, under prefix.
func (a *api) subscriptions() []string {
	return []string{
		a.prefix + "INFO",
		a.prefix + "STREAM.NAMES",
		a.prefix + "STREAM.LIST",
		a.prefix + "STREAM.INFO.*",
		a.prefix + "STREAM.MSG.GET.*",
		a.prefix + "DIRECT.GET.>",
	}
}

// serve answers one request. A nil header and nil data mean no reply at
// all, which only happens when the server would not answer either.
func (a *api) serve(subject string, data []byte) (rhdr, rdata []byte) {
	rest, ok := strings.CutPrefix(subject, a.prefix)
	if !ok {
		return nil, nil
	}
	a.total.Add(1)
	var err error
	switch {
	case rest == "INFO":
		rdata, err = a.accountInfo()
	case rest == "STREAM.NAMES":
		rdata, err = a.streamNames(subject, data)
	case rest == "STREAM.LIST":
		rdata, err = a.streamList(subject, data)
	case strings.HasPrefix(rest, "STREAM.INFO."):
		rdata, err = a.streamInfo(subject, rest[len("STREAM.INFO."):], data)
	case strings.HasPrefix(rest, "STREAM.MSG.GET."):
		rdata, err = a.msgGet(subject, rest[len("STREAM.MSG.GET."):], data)
	case strings.HasPrefix(rest, "DIRECT.GET."):
		name, key, shortcut := strings.Cut(rest[len("DIRECT.GET."):], ".")
		rhdr, rdata, err = a.directGet(subject, name, key, shortcut, data)
	default:
		return nil, nil
	}
	if err != nil {
		// A store failure: answer as the server does when a read fails
		// inside JetStream, rather than leave the client waiting.
		a.log.Error("nats bridge: read failed", "subject", subject, "err", err)
		a.errs.Add(1)
		if strings.HasPrefix(rest, "DIRECT.GET.") {
			return []byte(fmt.Sprintf("NATS/1.0 500 %v\r\n\r\n", oneLine(err.Error()))), nil
		}
		return nil, mustJSON(server.ApiResponse{Type: "io.nats.jetstream.api.v1.error", Error: &server.ApiError{Code: 500, Description: err.Error()}})
	}
	return rhdr, rdata
}

func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own types go through here; a failure is a bug.
		panic(fmt.Sprintf("bridge: marshal %T: %v", v, err))
	}
	return b
}

// unmarshalStrict decodes a JSON API request as nats-server does in its
// default strict mode: unknown fields are errors, several documents are
// read in turn, syntax errors name their offset.
func unmarshalStrict(msg []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.DisallowUnknownFields()
	for {
		if err := dec.Decode(v); err != nil {
			if err == io.EOF {
				return nil
			}
			var syntaxErr *json.SyntaxError
			if errors.As(err, &syntaxErr) {
				err = fmt.Errorf("%w at offset %d", err, syntaxErr.Offset)
			}
			return err
		}
	}
}

// isEmptyRequest is nats-server's test for a request without content.
func isEmptyRequest(req []byte) bool {
	if len(req) == 0 || bytes.Equal(req, []byte("{}")) {
		return true
	}
	var v any
	if err := json.Unmarshal(req, &v); err != nil {
		return false
	}
	vm, ok := v.(map[string]any)
	return ok && len(vm) == 0
}

// isJSONObjectOrArray is nats-server's test for a request body worth
// decoding (other bodies are ignored, not refused).
func isJSONObjectOrArray(req []byte) bool {
	req = bytes.TrimLeft(req, " \t\n\r")
	return len(req) > 0 && (req[0] == '{' || req[0] == '[')
}

// validStreamName says whether a Redis key can be a NATS stream name:
// nats-server refuses names with whitespace, '.', '*', '>', path
// separators or non-printable characters, and longer than 255 bytes.
func validStreamName(name []byte) bool {
	if len(name) == 0 || len(name) > 255 {
		return false
	}
	for _, c := range name {
		if c <= ' ' || c >= 0x7f || c == '.' || c == '*' || c == '>' || c == '/' || c == '\\' {
			return false
		}
	}
	return true
}

// directGet answers $JS.API.DIRECT.GET.<name>[.<key>] as nats-server's
// processDirectGetRequest / processDirectGetLastBySubjectRequest /
// getDirectRequest do. A stream that does not exist has no subscriber on
// a real server, so the requester gets the no-responders status.
func (a *api) directGet(subject, name, key string, shortcut bool, msg []byte) (hdr, data []byte, err error) {
	exists := func() (bool, error) {
		_, ok, err := a.store.State(name)
		return ok, err
	}
	refuse := func(status []byte) ([]byte, []byte, error) {
		ok, err := exists()
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return noResponders(subject), nil, nil
		}
		a.errs.Add(1)
		return status, nil, nil
	}
	var req server.JSApiMsgGetRequest
	if shortcut {
		if len(msg) > 0 {
			if err := json.Unmarshal(msg, &req); err != nil {
				return refuse(statusMalformedRequest)
			}
		}
		if key == "" {
			return refuse(statusBadRequest)
		}
		if req.LastFor != "" || req.NextFor != "" || len(req.MultiLastFor) > 0 || req.Seq != 0 || req.Batch != 0 ||
			req.StartTime != nil || req.UpToSeq != 0 || req.UpToTime != nil {
			return refuse(statusBadRequest)
		}
		req.LastFor = key
	} else {
		if len(msg) == 0 {
			return refuse(statusEmptyRequest)
		}
		if err := json.Unmarshal(msg, &req); err != nil {
			return refuse(statusMalformedRequest)
		}
		if req.Seq == 0 && req.LastFor == "" && req.NextFor == "" && len(req.MultiLastFor) == 0 && req.StartTime == nil {
			return refuse(statusEmptyRequest)
		}
		if (req.Seq > 0 && req.LastFor != "") ||
			(req.Seq > 0 && req.StartTime != nil) ||
			(req.StartTime != nil && req.LastFor != "") ||
			(req.LastFor != "" && req.NextFor != "") ||
			(req.LastFor != "" && req.Batch > 0) ||
			(req.LastFor != "" && len(req.MultiLastFor) > 0) ||
			(req.NextFor != "" && len(req.MultiLastFor) > 0) ||
			(req.UpToSeq > 0 && req.UpToTime != nil) {
			return refuse(statusBadRequest)
		}
		if req.Batch > 0 || len(req.MultiLastFor) > 0 || req.StartTime != nil {
			return refuse(statusNotImplemented)
		}
	}
	e, ok, err := a.lookup(name, &req)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return refuse(statusNotFound)
	}
	data = payload(e)
	if req.NoHeaders {
		return nil, data, nil
	}
	return appendDirectHeader(nil, name, e), data, nil
}

// lookup is the part of getDirectRequest and jsMsgGetRequest that picks
// the message: by sequence, next for a subject from a sequence, or last
// for a subject.
func (a *api) lookup(name string, req *server.JSApiMsgGetRequest) (stream.SeqEntry, bool, error) {
	switch {
	case req.Seq > 0 && req.NextFor == "":
		return a.store.BySeq(name, req.Seq)
	case req.NextFor != "":
		return a.store.NextBySubject(name, req.Seq, req.NextFor)
	default:
		return a.store.LastBySubject(name, req.LastFor)
	}
}

// msgGet answers $JS.API.STREAM.MSG.GET.<name> as jsMsgGetRequest does,
// checks in the same order.
func (a *api) msgGet(subject, name string, msg []byte) ([]byte, error) {
	resp := server.JSApiMsgGetResponse{ApiResponse: server.ApiResponse{Type: server.JSApiMsgGetResponseType}}
	fail := func(e *server.ApiError) ([]byte, error) {
		a.errs.Add(1)
		resp.Error = e
		return mustJSON(resp), nil
	}
	if isEmptyRequest(msg) {
		return fail(server.NewJSBadRequestError())
	}
	var req server.JSApiMsgGetRequest
	if err := unmarshalStrict(msg, &req); err != nil {
		return fail(server.NewJSInvalidJSONError(err))
	}
	if req.Batch > 0 || req.MaxBytes > 0 {
		return fail(server.NewJSBadRequestError())
	}
	if (req.Seq > 0 && req.LastFor != "") ||
		(req.Seq == 0 && req.LastFor == "" && req.NextFor == "" && req.StartTime == nil) ||
		(req.Seq > 0 && req.StartTime != nil) ||
		(req.StartTime != nil && req.LastFor != "") ||
		(req.LastFor != "" && req.NextFor != "") {
		return fail(server.NewJSBadRequestError())
	}
	if _, ok, err := a.store.State(name); err != nil {
		return nil, err
	} else if !ok {
		return fail(server.NewJSStreamNotFoundError())
	}
	if req.StartTime != nil {
		return fail(server.NewJSBadRequestError(server.Unless(errors.New("start_time is not supported by the Eddy bridge"))))
	}
	e, ok, err := a.lookup(name, &req)
	if err != nil {
		return nil, err
	}
	if !ok {
		return fail(server.NewJSNoMessageFoundError())
	}
	resp.Message = &server.StoredMsg{
		Subject:  string(e.Subject),
		Sequence: e.Seq,
		Data:     payload(e),
		Time:     entryTime(e),
	}
	if !req.NoHeaders {
		resp.Message.Header = appendEntryHeader(nil, e)
	}
	return mustJSON(resp), nil
}

// streamInfo answers $JS.API.STREAM.INFO.<name>.
func (a *api) streamInfo(subject, name string, msg []byte) ([]byte, error) {
	resp := server.JSApiStreamInfoResponse{ApiResponse: server.ApiResponse{Type: server.JSApiStreamInfoResponseType}}
	if isJSONObjectOrArray(msg) {
		var req server.JSApiStreamInfoRequest
		if err := unmarshalStrict(msg, &req); err != nil {
			a.errs.Add(1)
			resp.Error = server.NewJSInvalidJSONError(err)
			return mustJSON(resp), nil
		}
	}
	st, ok, err := a.store.State(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		a.errs.Add(1)
		resp.Error = server.NewJSStreamNotFoundError()
		return mustJSON(resp), nil
	}
	resp.StreamInfo = a.info(name, st)
	return mustJSON(resp), nil
}

// info is JetStream's view of one stream: a limits-retention file
// stream without limits, with Direct Get allowed, that NATS cannot
// write to (it is Redis's), and its state from the sequence view.
func (a *api) info(name string, st stream.SeqState) *server.StreamInfo {
	cfg := server.StreamConfig{
		Name:         name,
		Subjects:     streamSubjects(name),
		Retention:    server.LimitsPolicy,
		MaxConsumers: -1,
		MaxMsgs:      -1,
		MaxBytes:     -1,
		MaxMsgsPer:   -1,
		MaxMsgSize:   -1,
		Discard:      server.DiscardOld,
		Storage:      server.FileStorage,
		Replicas:     1,
		Compression:  server.NoCompression,
		AllowDirect:  true,
		DenyDelete:   true,
		DenyPurge:    true,
	}
	if strings.HasPrefix(name, "KV_") {
		cfg.MaxMsgsPer = kvHistory
		cfg.AllowRollup = true
	}
	state := server.StreamState{
		Msgs:     st.Messages,
		Bytes:    st.Bytes,
		FirstSeq: st.FirstSeq,
		LastSeq:  st.LastSeq,
	}
	if st.Messages > 0 {
		state.FirstTime = idTime(st.FirstID)
		state.LastTime = idTime(st.LastID)
		if span := st.LastSeq - st.FirstSeq + 1; span > st.Messages {
			state.NumDeleted = int(span - st.Messages)
		}
	}
	return &server.StreamInfo{
		Config:    cfg,
		Created:   state.FirstTime,
		State:     state,
		Domain:    a.domain,
		TimeStamp: a.now().UTC(),
	}
}

// streamSubjects is what STREAM.INFO reports as the stream's subjects:
// entries without a subject field carry the key itself, and by
// convention others sit below it; a KV_<bucket> stream holds $KV.<bucket>.>.
func streamSubjects(name string) []string {
	if b, ok := strings.CutPrefix(name, "KV_"); ok && b != "" {
		return []string{"$KV." + b + ".>"}
	}
	return []string{name, name + ".>"}
}

// names lists every stream with a valid name, sorted, optionally only
// those whose subjects collide with filter.
func (a *api) names(filter string) ([]string, error) {
	var out []string
	err := a.store.Streams(func(k []byte) {
		if !validStreamName(k) {
			return
		}
		name := string(k)
		if filter != "" && !slices.ContainsFunc(streamSubjects(name), func(s string) bool { return server.SubjectsCollide(filter, s) }) {
			return
		}
		out = append(out, name)
	})
	slices.Sort(out)
	return out, err
}

// page applies a request offset to a sorted list, as the server does.
func page(all []string, offset, limit int) []string {
	offset = min(max(offset, 0), len(all))
	return all[offset:min(len(all), offset+limit)]
}

// streamNames answers $JS.API.STREAM.NAMES.
func (a *api) streamNames(subject string, msg []byte) ([]byte, error) {
	resp := server.JSApiStreamNamesResponse{ApiResponse: server.ApiResponse{Type: server.JSApiStreamNamesResponseType}}
	var req server.JSApiStreamNamesRequest
	if isJSONObjectOrArray(msg) {
		if err := unmarshalStrict(msg, &req); err != nil {
			a.errs.Add(1)
			resp.Error = server.NewJSInvalidJSONError(err)
			return mustJSON(resp), nil
		}
	}
	all, err := a.names(req.Subject)
	if err != nil {
		return nil, err
	}
	resp.Streams = page(all, req.Offset, server.JSApiNamesLimit)
	resp.Total, resp.Limit, resp.Offset = len(all), server.JSApiNamesLimit, min(max(req.Offset, 0), len(all))
	return mustJSON(resp), nil
}

// streamList answers $JS.API.STREAM.LIST.
func (a *api) streamList(subject string, msg []byte) ([]byte, error) {
	resp := server.JSApiStreamListResponse{ApiResponse: server.ApiResponse{Type: server.JSApiStreamListResponseType}, Streams: []*server.StreamInfo{}}
	var req server.JSApiStreamListRequest
	if isJSONObjectOrArray(msg) {
		if err := unmarshalStrict(msg, &req); err != nil {
			a.errs.Add(1)
			resp.Error = server.NewJSInvalidJSONError(err)
			return mustJSON(resp), nil
		}
	}
	all, err := a.names(req.Subject)
	if err != nil {
		return nil, err
	}
	for _, name := range page(all, req.Offset, server.JSApiListLimit) {
		st, ok, err := a.store.State(name)
		if err != nil {
			return nil, err
		}
		if !ok { // deleted since the scan
			resp.Missing = append(resp.Missing, name)
			continue
		}
		resp.Streams = append(resp.Streams, a.info(name, st))
	}
	resp.Total, resp.Limit, resp.Offset = len(all), server.JSApiListLimit, min(max(req.Offset, 0), len(all))
	return mustJSON(resp), nil
}

// accountInfo answers $JS.API.INFO: no limits, the streams the bridge
// serves and their bytes as storage, no consumers.
func (a *api) accountInfo() ([]byte, error) {
	all, err := a.names("")
	if err != nil {
		return nil, err
	}
	stats := &server.JetStreamAccountStats{Domain: a.domain}
	for _, name := range all {
		st, ok, err := a.store.State(name)
		if err != nil {
			return nil, err
		}
		if ok {
			stats.Streams++
			stats.Store += st.Bytes
		}
	}
	stats.Limits = server.JetStreamAccountLimits{MaxMemory: -1, MaxStore: -1, MaxStreams: -1, MaxConsumers: -1}
	stats.API = server.JetStreamAPIStats{Level: server.JSApiLevel, Total: a.total.Load(), Errors: a.errs.Load()}
	resp := server.JSApiAccountInfoResponse{ApiResponse: server.ApiResponse{Type: server.JSApiAccountInfoResponseType}, JetStreamAccountStats: stats}
	return mustJSON(resp), nil
}

// The message mapping: the payload is field "data", every other field
// but "subject" a header of the same name, the time the entry ID's
// milliseconds.

func payload(e stream.SeqEntry) []byte {
	for i := 0; i+1 < len(e.Fields); i += 2 {
		if string(e.Fields[i]) == "data" {
			return e.Fields[i+1]
		}
	}
	return nil
}

func idTime(id stream.ID) time.Time {
	return time.UnixMilli(int64(id.Ms)).UTC()
}

func entryTime(e stream.SeqEntry) time.Time { return idTime(e.ID) }

// appendHeaderFields appends the entry's fields as header lines; names
// that cannot be NATS header keys are left out, and line breaks in
// values become spaces, as Go's http.Header.Write does.
func appendHeaderFields(dst []byte, e stream.SeqEntry) []byte {
	seenData, seenSubject := false, false
	for i := 0; i+1 < len(e.Fields); i += 2 {
		k, v := e.Fields[i], e.Fields[i+1]
		switch {
		case !seenData && string(k) == "data":
			seenData = true
			continue
		case !seenSubject && string(k) == "subject":
			seenSubject = true
			continue
		case !validHeaderKey(k):
			continue
		}
		dst = append(dst, k...)
		dst = append(dst, ": "...)
		for _, c := range v {
			if c == '\r' || c == '\n' {
				c = ' '
			}
			dst = append(dst, c)
		}
		dst = append(dst, "\r\n"...)
	}
	return dst
}

// appendEntryHeader is the header block stored with the message, as
// STREAM.MSG.GET returns it; nil when the entry has no header fields.
func appendEntryHeader(dst []byte, e stream.SeqEntry) []byte {
	start := len(dst)
	dst = append(dst, "NATS/1.0\r\n"...)
	n := len(dst)
	dst = appendHeaderFields(dst, e)
	if len(dst) == n {
		return dst[:start]
	}
	return append(dst, "\r\n"...)
}

// appendDirectHeader is a Direct Get reply's header block: the entry's
// own headers, then the four Nats- headers in the server's order.
func appendDirectHeader(dst []byte, name string, e stream.SeqEntry) []byte {
	dst = append(dst, "NATS/1.0\r\n"...)
	dst = appendHeaderFields(dst, e)
	dst = append(dst, "Nats-Stream: "...)
	dst = append(dst, name...)
	dst = append(dst, "\r\nNats-Subject: "...)
	dst = append(dst, e.Subject...)
	dst = append(dst, "\r\nNats-Sequence: "...)
	dst = strconv.AppendUint(dst, e.Seq, 10)
	dst = append(dst, "\r\nNats-Time-Stamp: "...)
	dst = entryTime(e).AppendFormat(dst, time.RFC3339Nano)
	return append(dst, "\r\n\r\n"...)
}

// validHeaderKey is nats.go's rule: printable ASCII without ':'.
func validHeaderKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if c < '!' || c > '~' || c == ':' {
			return false
		}
	}
	return true
}
