package bridge

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
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
	cons   *consumers // push consumers (consumer.go); nil refuses them
	// serverName is what STREAM.INFO reports as the cluster leader: the
	// embedded server's name, "eddy" on an external server.
	serverName string

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
		a.prefix + "CONSUMER.CREATE.>",
		a.prefix + "CONSUMER.DURABLE.CREATE.>",
		a.prefix + "CONSUMER.DELETE.*.*",
		a.prefix + "CONSUMER.INFO.*.*",
	}
}

// replier takes a request's replies, in order.
type replier interface {
	send(hdr, data []byte)
}

// inline says whether a request is cheap enough to answer on the
// connection's read loop: a Direct Get or message get of one message
// found through an index (by sequence, or last for a literal subject).
// Batches, walks by subject, wildcards and everything else go to the
// workers.
func (a *api) inline(subject string, data []byte) bool {
	rest, ok := strings.CutPrefix(subject, a.prefix)
	if !ok || !(strings.HasPrefix(rest, "DIRECT.GET.") || strings.HasPrefix(rest, "STREAM.MSG.GET.")) {
		return false
	}
	return !strings.ContainsAny(rest, "*>") && !bytes.ContainsAny(data, "*>") &&
		!bytes.Contains(data, []byte(`"batch"`)) && !bytes.Contains(data, []byte(`"multi_last"`)) &&
		!bytes.Contains(data, []byte(`"next_by_subj"`)) && !bytes.Contains(data, []byte(`"start_time"`))
}

// respond answers one request through out: a Direct Get (which may
// reply with several messages), else what serve answers.
func (a *api) respond(subject string, hdr, data []byte, out replier) {
	// Two cuts: a.prefix+"DIRECT.GET." would be built for every request.
	if rest, ok := strings.CutPrefix(subject, a.prefix); ok && strings.HasPrefix(rest, "DIRECT.GET.") {
		rest = rest[len("DIRECT.GET."):]
		a.total.Add(1)
		name, key, shortcut := strings.Cut(rest, ".")
		if err := a.directGet(subject, name, key, shortcut, hdr, data, out); err != nil {
			// A store failure: answer as the server does when a read
			// fails inside JetStream, rather than leave the client
			// waiting.
			a.log.Error("nats bridge: read failed", "subject", subject, "err", err)
			a.errs.Add(1)
			out.send(statusReadFailed(err), nil)
		}
		return
	}
	rhdr, rdata := a.serve(subject, hdr, data)
	if rhdr != nil || rdata != nil {
		out.send(rhdr, rdata)
	}
}

// serve answers one request. A nil header and nil data mean no reply at
// all, which only happens when the server would not answer either.
func (a *api) serve(subject string, hdr, data []byte) (rhdr, rdata []byte) {
	rest, ok := strings.CutPrefix(subject, a.prefix)
	if !ok {
		return nil, nil
	}
	a.total.Add(1)
	if errorOnRequiredApiLevel(hdr) {
		if r := levelError(rest); r != nil {
			a.errs.Add(1)
			return nil, r
		}
	}
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
	case strings.HasPrefix(rest, "CONSUMER."):
		rdata, err = a.consumerRequest(subject, rest, data)
	default:
		return nil, nil
	}
	if err != nil {
		// A store failure: answer as the server does when a read fails
		// inside JetStream, rather than leave the client waiting.
		a.log.Error("nats bridge: read failed", "subject", subject, "err", err)
		a.errs.Add(1)
		return nil, apiReadFailed(err)
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
// getDirectRequest / getDirectMulti do, checks in the same order. A
// stream that does not exist has no subscriber on a real server, so the
// requester gets the no-responders status.
func (a *api) directGet(subject, name, key string, shortcut bool, reqHdr, msg []byte, out replier) error {
	if errorOnRequiredApiLevel(reqHdr) {
		return a.refuseDirect(subject, name, statusRequiredApiLevel, out)
	}
	var req server.JSApiMsgGetRequest
	if status := parseDirectGet(&req, key, shortcut, msg); status != nil {
		return a.refuseDirect(subject, name, status, out)
	}
	noStream := func() error {
		out.send(noResponders(subject), nil)
		return nil
	}
	if len(req.MultiLastFor) > 0 {
		return a.directMulti(name, &req, out, noStream)
	}
	if req.StartTime != nil {
		seq, ok, err := a.store.SeqFromTime(name, *req.StartTime)
		if err != nil {
			return err
		}
		if !ok {
			return noStream()
		}
		req.Seq = seq
	}
	// A batch is any batch but 0, as the server reads it.
	if req.Batch != 0 {
		return a.directBatch(subject, name, &req, out)
	}
	e, ok, err := a.lookup(name, &req)
	if err != nil {
		return err
	}
	if !ok {
		return a.refuseDirect(subject, name, statusNotFound, out)
	}
	var hdr []byte
	if !req.NoHeaders {
		hdr = append(appendDirectFields(make([]byte, 0, 256), name, e), "\r\n"...)
	}
	out.send(hdr, payload(e))
	return nil
}

// refuseDirect answers a Direct Get with status, or with the
// no-responders status when stream name does not exist.
func (a *api) refuseDirect(subject, name string, status []byte, out replier) error {
	_, ok, err := a.store.State(name)
	if err != nil {
		return err
	}
	if !ok {
		out.send(noResponders(subject), nil)
		return nil
	}
	a.errs.Add(1)
	out.send(status, nil)
	return nil
}

// parseDirectGet reads a Direct Get's request into req, checked as
// processDirectGetRequest (the body) and
// processDirectGetLastBySubjectRequest (shortcut: the last message of
// subject key, the body optional) check it, in their order. status is
// the refusal; nil when the request can be answered.
func parseDirectGet(req *server.JSApiMsgGetRequest, key string, shortcut bool, msg []byte) (status []byte) {
	if shortcut {
		if len(msg) > 0 {
			if err := json.Unmarshal(msg, req); err != nil {
				return statusMalformedRequest
			}
		}
		if key == "" {
			return statusBadRequest
		}
		if req.LastFor != "" || req.NextFor != "" || len(req.MultiLastFor) > 0 || req.Seq != 0 || req.Batch != 0 ||
			req.StartTime != nil || req.UpToSeq != 0 || req.UpToTime != nil {
			return statusBadRequest
		}
		req.LastFor = key
		return nil
	}
	if len(msg) == 0 {
		return statusEmptyRequest
	}
	if seq, ok := seqOnlyRequest(msg); ok {
		req.Seq = seq
	} else if err := json.Unmarshal(msg, req); err != nil {
		return statusMalformedRequest
	}
	if req.Seq == 0 && req.LastFor == "" && req.NextFor == "" && len(req.MultiLastFor) == 0 && req.StartTime == nil {
		return statusEmptyRequest
	}
	if (req.Seq > 0 && req.LastFor != "") ||
		(req.Seq > 0 && req.StartTime != nil) ||
		(req.StartTime != nil && req.LastFor != "") ||
		(req.LastFor != "" && req.NextFor != "") ||
		(req.LastFor != "" && req.Batch > 0) ||
		(req.LastFor != "" && len(req.MultiLastFor) > 0) ||
		(req.NextFor != "" && len(req.MultiLastFor) > 0) ||
		(req.UpToSeq > 0 && req.UpToTime != nil) {
		return statusBadRequest
	}
	return nil
}

// directBatch answers a batch Direct Get as getDirectRequest does: from
// req.Seq on, up to req.Batch messages matching req.NextFor, or
// req.MaxBytes' worth, each with the count still pending before the
// batch started and the previous message's sequence, then an EOB status.
func (a *api) directBatch(subject, name string, req *server.JSApiMsgGetRequest, out replier) error {
	seq := req.Seq
	np, validThrough, err := a.numPending(name, seq, req.NextFor)
	if err != nil {
		return err
	}
	maxBytes := directMaxBytes(req)
	var lseq uint64
	var sentBytes int
	var stored []byte
	for i := 0; i < req.Batch; i++ {
		var e stream.SeqEntry
		var ok bool
		if seq > 0 || req.NextFor != "" {
			e, ok, err = a.store.NextBySubject(name, seq, req.NextFor)
			if ok {
				seq = e.Seq
			}
			seq++
		} else {
			e, ok, err = a.store.LastBySubject(name, req.LastFor)
		}
		if err != nil {
			return err
		}
		if !ok {
			if i > 0 {
				break
			}
			return a.refuseDirect(subject, name, statusNotFound, out)
		}
		var hdr []byte
		if !req.NoHeaders {
			if np > 0 {
				np--
			}
			hdr = appendDirectFields(make([]byte, 0, 256), name, e)
			hdr = append(appendBatchFields(hdr, np, lseq), "\r\n"...)
		}
		lseq = e.Seq
		data := payload(e)
		out.send(hdr, data)
		if req.Batch == 1 {
			break // max_bytes only cuts a batch short
		}
		stored = appendEntryHeader(stored[:0], e) // its stored header, as the server counts
		sentBytes += len(e.Subject) + len(stored) + len(data)
		if sentBytes >= maxBytes {
			break
		}
	}
	st, _, err := a.store.State(name)
	if err != nil {
		return err
	}
	if st.LastSeq > validThrough {
		if np, _, err = a.numPending(name, seq, req.NextFor); err != nil {
			return err
		}
	}
	out.send(statusEOB(np, lseq), nil)
	return nil
}

// directMaxBytes is a batch's max_bytes: the server's max_pending by
// default.
func directMaxBytes(req *server.JSApiMsgGetRequest) int {
	if req.MaxBytes == 0 {
		return server.MAX_PENDING_SIZE
	}
	return req.MaxBytes
}

// maxMultiLast is the most subjects a multi_last Direct Get answers
// (getDirectMulti's maxAllowedResponses).
const maxMultiLast = 1024

// directMulti answers a multi_last Direct Get as getDirectMulti does: the
// last message of every subject matching one of the filters, up to a
// sequence, in sequence order, then an EOB status.
func (a *api) directMulti(name string, req *server.JSApiMsgGetRequest, out replier, noStream func() error) error {
	maxBytes := directMaxBytes(req)
	st, ok, err := a.store.State(name)
	if err != nil {
		return err
	}
	if !ok {
		return noStream()
	}
	upTo := req.UpToSeq
	if req.UpToTime != nil {
		if upTo, _, err = a.store.SeqFromTime(name, *req.UpToTime); err != nil {
			return err
		}
		if upTo <= st.FirstSeq {
			out.send(statusNoResults, nil)
			return nil
		}
		upTo-- // the last sequence before the time
	}
	if upTo == 0 {
		upTo = st.LastSeq
	} else if upTo > st.LastSeq {
		// The file store finds no message block holding upTo, and so
		// no messages.
		out.send(statusNoResults, nil)
		return nil
	}
	last := map[string]stream.SeqEntry{}
	tooMany := false
	err = a.store.Scan(name, 0, func(e stream.SeqEntry) bool {
		if e.Seq > upTo {
			return false
		}
		for _, f := range req.MultiLastFor {
			if subjectMatches(f, e.Subject) {
				last[string(e.Subject)] = e
				break
			}
		}
		tooMany = len(last) > maxMultiLast
		return !tooMany
	})
	if err != nil {
		return err
	}
	if tooMany {
		out.send(statusTooManyResults, nil)
		return nil
	}
	if len(last) == 0 {
		out.send(statusNoResults, nil)
		return nil
	}
	es := slices.SortedFunc(maps.Values(last), func(x, y stream.SeqEntry) int { return cmp.Compare(x.Seq, y.Seq) })
	np := uint64(len(es))
	var lseq uint64
	var sentBytes, sent int
	var stored []byte
	for _, e := range es {
		if np > 0 {
			np--
		}
		if e.Seq < req.Seq {
			continue
		}
		hdr := appendDirectFields(nil, name, e)
		hdr = append(appendBatchFields(hdr, np, lseq), "\r\n"...)
		lseq = e.Seq
		data := payload(e)
		out.send(hdr, data)
		stored = appendEntryHeader(stored[:0], e) // its stored header, as the server counts
		sentBytes += len(e.Subject) + len(stored) + len(data)
		if sentBytes >= maxBytes {
			break
		}
		sent++
		if req.Batch > 0 && sent >= req.Batch {
			break
		}
	}
	out.send(statusEOBUpTo(np, lseq, upTo), nil)
	return nil
}

// numPending is the store's NumPending(from, filter): live messages from
// sequence from on whose subject matches filter ("" all), and the last
// sequence the count is valid through.
func (a *api) numPending(name string, from uint64, filter string) (n, validThrough uint64, err error) {
	st, ok, err := a.store.State(name)
	if err != nil || !ok {
		return 0, 0, err
	}
	switch {
	case filter == "" && from <= st.FirstSeq:
		return st.Messages, st.LastSeq, nil
	case filter == "" && st.LastSeq-st.FirstSeq+1 == st.Messages:
		// No gaps: every sequence from on is a message.
		if from > st.LastSeq {
			return 0, st.LastSeq, nil
		}
		return st.LastSeq - from + 1, st.LastSeq, nil
	}
	err = a.store.Scan(name, from, func(e stream.SeqEntry) bool {
		if e.Seq > st.LastSeq {
			return false
		}
		if filter == "" || subjectMatches(filter, e.Subject) {
			n++
		}
		return true
	})
	return n, st.LastSeq, err
}

// seqOnlyRequest reads the commonest Direct Get body, {"seq":N}, without
// the JSON decoder; anything else is left to it.
func seqOnlyRequest(msg []byte) (uint64, bool) {
	digits, ok := bytes.CutPrefix(msg, []byte(`{"seq":`))
	if !ok {
		return 0, false
	}
	digits, ok = bytes.CutSuffix(digits, []byte("}"))
	if !ok || len(digits) == 0 || len(digits) > 20 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false // the decoder's overflow error
		}
		n = n*10 + d
	}
	return n, true
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
		seq, ok, err := a.store.SeqFromTime(name, *req.StartTime)
		if err != nil {
			return nil, err
		}
		if !ok {
			return fail(server.NewJSStreamNotFoundError())
		}
		req.Seq = seq
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
	var req server.JSApiStreamInfoRequest
	if isJSONObjectOrArray(msg) {
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
	if resp.StreamInfo, err = a.info(name, st); err != nil {
		return nil, err
	}
	if req.SubjectsFilter != "" {
		counts, err := a.subjectCounts(name, req.SubjectsFilter)
		if err != nil {
			return nil, err
		}
		// As jsStreamInfoRequest pages them: all when they fit, else
		// a sorted page from the offset.
		if n := len(counts); n > 0 {
			offset := max(req.Offset, 0)
			resp.Offset, resp.Limit, resp.Total = offset, server.JSMaxSubjectDetails, n
			if offset == 0 && n <= server.JSMaxSubjectDetails {
				resp.StreamInfo.State.Subjects = counts
			} else {
				subjects := slices.Sorted(maps.Keys(counts))
				offset = min(offset, n)
				end := min(offset+server.JSMaxSubjectDetails, n)
				var pg map[string]uint64
				if end > offset {
					pg = make(map[string]uint64, end-offset)
					for _, s := range subjects[offset:end] {
						pg[s] = counts[s]
					}
				}
				resp.StreamInfo.State.Subjects = pg
			}
		}
	}
	return mustJSON(resp), nil
}

// subjectCounts is the store's SubjectsTotals: live messages per subject
// matching filter. It walks the stream.
func (a *api) subjectCounts(name, filter string) (map[string]uint64, error) {
	counts := map[string]uint64{}
	err := a.store.Scan(name, 0, func(e stream.SeqEntry) bool {
		if subjectMatches(filter, e.Subject) {
			counts[string(e.Subject)]++
		}
		return true
	})
	return counts, err
}

// info is JetStream's view of one stream: a limits-retention file
// stream without limits, with Direct Get allowed, that NATS cannot
// write to (it is Redis's), and its state from the sequence view.
func (a *api) info(name string, st stream.SeqState) (*server.StreamInfo, error) {
	subjects, numSubjects, err := a.configSubjects(name)
	if err != nil {
		return nil, err
	}
	cfg := server.StreamConfig{
		Name:         name,
		Subjects:     subjects,
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
		// What nats-server v2.11+ puts in every stream's config: the API
		// level the stream needs (0: nothing newer than the first) and
		// the serving server's version and level (the nats CLI shows
		// them as Host Version and Required API Level).
		Metadata: map[string]string{
			server.JSRequiredLevelMetadataKey: "0",
			server.JSServerVersionMetadataKey: server.VERSION,
			server.JSServerLevelMetadataKey:   strconv.Itoa(server.JSApiLevel),
		},
	}
	if strings.HasPrefix(name, "KV_") {
		cfg.MaxMsgsPer = kvHistory
		cfg.AllowRollup = true
	}
	state := server.StreamState{
		Msgs:        st.Messages,
		Bytes:       st.Bytes,
		FirstSeq:    st.FirstSeq,
		LastSeq:     st.LastSeq,
		NumSubjects: numSubjects,
	}
	if st.Messages > 0 {
		state.FirstTime = idTime(st.FirstID)
		state.LastTime = idTime(st.LastID)
		if span := st.LastSeq - st.FirstSeq + 1; span > st.Messages {
			state.NumDeleted = int(span - st.Messages)
		}
	}
	return &server.StreamInfo{
		Config:  cfg,
		Created: state.FirstTime,
		State:   state,
		// A server without a cluster names itself as the leader.
		Cluster:   &server.ClusterInfo{Leader: a.serverName},
		Domain:    a.domain,
		TimeStamp: a.now().UTC(),
	}, nil
}

// maxConfigSubjects is the most distinct subjects configSubjects reads
// (one index seek each); a stream with more reports the convention.
const maxConfigSubjects = 1000

// configSubjects is what STREAM.INFO reports as a stream's subjects: the
// subjects its entries carry, as a stream created to hold exactly them
// would list them, with K and K.> standing for the key and everything
// below it (so a stream of plain Redis entries reports [K]); sorted. A
// KV_<bucket> stream holds $KV.<bucket>.>, which KV clients require.
// When the subjects cannot be read cheaply (more than
// maxConfigSubjects, or entries with and without subjects in a large
// stream) the convention [K, K.>] stands in. numSubjects is the number
// of distinct subjects, 0 when not read.
func (a *api) configSubjects(name string) (subjects []string, numSubjects int, err error) {
	stored, complete, err := a.store.Subjects(name, maxConfigSubjects)
	if err != nil {
		return nil, 0, err
	}
	if complete {
		numSubjects = len(stored)
	}
	if b, ok := strings.CutPrefix(name, "KV_"); ok && b != "" {
		return []string{"$KV." + b + ".>"}, numSubjects, nil
	}
	switch {
	case !complete:
		return []string{name, name + ".>"}, 0, nil
	case len(stored) == 0:
		return []string{name}, 0, nil
	}
	set := map[string]bool{}
	for _, s := range stored {
		switch {
		case s == name:
			set[name] = true
		case strings.HasPrefix(s, name+"."):
			set[name+".>"] = true
		default:
			set[s] = true
		}
	}
	return slices.Sorted(maps.Keys(set)), numSubjects, nil
}

// names lists every stream with a valid name, sorted, optionally only
// those whose subjects collide with filter.
func (a *api) names(filter string) ([]string, error) {
	var out []string
	var serr error
	err := a.store.Streams(func(k []byte) {
		if !validStreamName(k) || serr != nil {
			return
		}
		name := string(k)
		if filter != "" {
			subjects, _, err := a.configSubjects(name)
			if err != nil {
				serr = err
				return
			}
			if !slices.ContainsFunc(subjects, func(s string) bool { return server.SubjectsCollide(filter, s) }) {
				return
			}
		}
		out = append(out, name)
	})
	slices.Sort(out)
	return out, cmp.Or(err, serr)
}

// page applies a request offset to a sorted list, as the server does,
// and returns the offset it applied (the one the reply reports).
func page(all []string, offset, limit int) ([]string, int) {
	offset = min(max(offset, 0), len(all))
	return all[offset:min(len(all), offset+limit)], offset
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
	resp.Streams, resp.Offset = page(all, req.Offset, server.JSApiNamesLimit)
	resp.Total, resp.Limit = len(all), server.JSApiNamesLimit
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
	names, offset := page(all, req.Offset, server.JSApiListLimit)
	for _, name := range names {
		st, ok, err := a.store.State(name)
		if err != nil {
			return nil, err
		}
		if !ok { // deleted since the scan
			resp.Missing = append(resp.Missing, name)
			continue
		}
		si, err := a.info(name, st)
		if err != nil {
			return nil, err
		}
		resp.Streams = append(resp.Streams, si)
	}
	resp.Total, resp.Limit, resp.Offset = len(all), server.JSApiListLimit, offset
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

// appendDirectFields is a Direct Get reply's header block without its
// closing empty line: the entry's own headers, then the four Nats-
// headers in the server's order.
func appendDirectFields(dst []byte, name string, e stream.SeqEntry) []byte {
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
	return append(dst, "\r\n"...)
}

// appendBatchFields adds what a batch's message carries after the
// Direct Get headers: messages still pending after it and the sequence
// of the message sent before it (0 for the first).
func appendBatchFields(dst []byte, pending, lastSeq uint64) []byte {
	dst = append(dst, "Nats-Num-Pending: "...)
	dst = strconv.AppendUint(dst, pending, 10)
	dst = append(dst, "\r\nNats-Last-Sequence: "...)
	dst = strconv.AppendUint(dst, lastSeq, 10)
	return append(dst, "\r\n"...)
}
