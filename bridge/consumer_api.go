package bridge

import (
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// The consumer API subjects (consumer.go holds the consumers): the
// checks and replies of nats-server's jsConsumerCreateRequest,
// jsConsumerInfoRequest and jsConsumerDeleteRequest, with its error
// codes, for the consumers the bridge can serve.

// consumerRequest answers CONSUMER.CREATE, CONSUMER.DURABLE.CREATE,
// CONSUMER.DELETE and CONSUMER.INFO (rest is the subject after the API
// prefix); nil means no reply, as the server gives none to a request it
// cannot parse.
func (a *api) consumerRequest(subject, rest string, msg []byte) ([]byte, error) {
	tokens := strings.Split(rest, ".")
	switch {
	case len(tokens) >= 3 && tokens[1] == "CREATE",
		len(tokens) >= 4 && tokens[1] == "DURABLE" && tokens[2] == "CREATE":
		return a.consumerCreate(tokens, msg)
	case len(tokens) == 4 && tokens[1] == "DELETE":
		return a.consumerDelete(tokens[2], tokens[3], msg)
	case len(tokens) == 4 && tokens[1] == "INFO":
		return a.consumerInfo(tokens[2], tokens[3])
	}
	return nil, nil
}

// consumerCreate answers CONSUMER.CREATE and CONSUMER.DURABLE.CREATE as
// jsConsumerCreateRequest does, checks in its order, for the consumers
// the bridge can serve.
func (a *api) consumerCreate(tokens []string, msg []byte) ([]byte, error) {
	resp := server.JSApiConsumerCreateResponse{ApiResponse: server.ApiResponse{Type: server.JSApiConsumerCreateResponseType}}
	fail := func(e *server.ApiError) ([]byte, error) {
		a.errs.Add(1)
		resp.Error = e
		return mustJSON(resp), nil
	}
	var req server.CreateConsumerRequest
	if err := unmarshalStrict(msg, &req); err != nil {
		return fail(server.NewJSInvalidJSONError(err))
	}
	streamName, e := createTarget(tokens, &req)
	if e != nil {
		return fail(e)
	}
	cfg := &req.Config
	st, ok, err := a.store.State(streamName)
	if err != nil {
		return nil, err
	}
	if !ok || !validStreamName([]byte(streamName)) {
		return fail(server.NewJSStreamNotFoundError())
	}
	if e := checkConsumerConfig(cfg); e != nil {
		return fail(e)
	}
	if e := a.unsupportedConsumer(cfg); e != nil {
		return fail(e)
	}
	if a.cons == nil || a.cons.pub == nil {
		why := "no leafnode connection"
		if a.cons != nil && a.cons.noPub != "" {
			why = a.cons.noPub
		}
		return fail(errPushUnavailable(why))
	}
	now := a.now()
	c := a.newConsumer(streamName, cfg, now)
	if err := c.start(st); err != nil {
		return nil, err
	}
	// The reply describes the consumer before its goroutine delivers.
	resp.ConsumerInfo = c.info(now)
	if !a.cons.add(c) {
		if a.cons.lookup(streamName, c.name) != nil {
			return fail(server.NewJSConsumerNameExistError())
		}
		if a.cons.count() >= maxConsumers {
			return fail(server.NewJSMaximumConsumersLimitError())
		}
		return fail(errBridgeClosing())
	}
	return mustJSON(resp), nil
}

// createTarget reads the stream (and consumer name and filter) a
// CONSUMER.CREATE or CONSUMER.DURABLE.CREATE subject names and checks
// them against the request, as the first checks of
// jsConsumerCreateRequest do, in their order; it names the consumer in
// req's config as the server does.
func createTarget(tokens []string, req *server.CreateConsumerRequest) (streamName string, e *server.ApiError) {
	var name, filter string
	legacyEphemeral, durable := false, false
	switch {
	case tokens[1] == "DURABLE":
		durable = true
		if len(tokens) != 5 {
			return "", server.NewJSConsumerDurableNameNotInSubjectError()
		}
		streamName, name = tokens[3], tokens[4]
	case len(tokens) == 3:
		legacyEphemeral = true
		streamName, name = tokens[2], req.Config.Name
	default:
		streamName, name = tokens[2], tokens[3]
		if len(tokens) > 4 {
			filter = strings.Join(tokens[4:], ".")
		}
	}
	cfg := &req.Config
	if streamName != req.Stream {
		return "", server.NewJSStreamMismatchError()
	}
	if strings.ContainsAny(name, `\/`) {
		return "", server.NewJSConsumerNameContainsPathSeparatorsError()
	}
	switch {
	case durable:
		if cfg.Durable == "" {
			return "", server.NewJSConsumerDurableNameNotSetError()
		}
		if name != cfg.Durable {
			return "", server.NewJSConsumerDurableNameNotMatchSubjectError()
		}
		cfg.Name = name
	case !legacyEphemeral:
		if cfg.Durable != "" && name != cfg.Durable {
			return "", server.NewJSConsumerDurableNameNotMatchSubjectError()
		}
		cfg.Name = name
	case cfg.Durable != "":
		return "", server.NewJSConsumerEphemeralWithDurableNameError()
	}
	if filter != "" && len(cfg.FilterSubjects) != 0 {
		return "", server.NewJSConsumerMultipleFiltersNotAllowedError()
	}
	if filter != "" && cfg.FilterSubject != filter {
		return "", server.NewJSConsumerCreateFilterSubjectMismatchError()
	}
	if cfg.Replicas > 1 {
		return "", server.NewJSStreamReplicasNotSupportedError()
	}
	return streamName, nil
}

// newConsumer makes the consumer cfg describes, not yet started, after
// filling in cfg's defaults as setConsumerConfigDefaults and addConsumer
// do.
func (a *api) newConsumer(streamName string, cfg *server.ConsumerConfig, now time.Time) *consumer {
	if cfg.MaxDeliver == 0 || cfg.MaxDeliver < -1 {
		cfg.MaxDeliver = -1
	}
	if cfg.InactiveThreshold <= 0 {
		cfg.InactiveThreshold = a.cons.inactive
	}
	if cfg.Heartbeat < 0 {
		cfg.Heartbeat = 0
	}
	if cfg.Metadata == nil {
		cfg.Metadata = make(map[string]string)
	}
	cfg.Metadata[server.JSRequiredLevelMetadataKey] = "0"
	name := cfg.Name
	if name == "" {
		// A legacy ephemeral: the server names it, its config stays
		// without a name.
		name = randomToken(8)
	}
	filters := cfg.FilterSubjects
	if cfg.FilterSubject != "" {
		filters = []string{cfg.FilterSubject}
	}
	if len(filters) == 1 && filters[0] == ">" {
		filters = nil
	}
	return &consumer{
		r:           a.cons,
		stream:      streamName,
		name:        name,
		dsubj:       cfg.DeliverSubject,
		filters:     filters,
		headersOnly: cfg.HeadersOnly,
		hb:          cfg.Heartbeat,
		inactive:    cfg.InactiveThreshold,
		poll:        a.cons.poll,
		created:     now.UTC(),
		cfg:         *cfg,
		wake:        make(chan struct{}, 1),
		stop:        make(chan struct{}),
	}
}

// checkConsumerConfig is the part of nats-server's checkConsumerCfg that
// applies to the consumers the bridge can serve.
func checkConsumerConfig(cfg *server.ConsumerConfig) *server.ApiError {
	if cfg.Name != "" && !validConsumerName(cfg.Name) {
		return errConsumerNameInvalid()
	}
	if cfg.Replicas < 0 {
		return server.NewJSReplicasCountCannotBeNegativeError()
	}
	if cfg.AckWait < 0 {
		return server.NewJSConsumerAckWaitNegativeError()
	}
	if d := cfg.DeliverSubject; d != "" {
		if subjectHasWildcard(d) {
			return server.NewJSConsumerDeliverToWildcardsError()
		}
		if !server.IsValidSubject(d) {
			return server.NewJSConsumerInvalidDeliverSubjectError()
		}
		if cfg.MaxWaiting != 0 {
			return server.NewJSConsumerPushMaxWaitingError()
		}
		if cfg.MaxAckPending > 0 && cfg.AckPolicy == server.AckNone {
			return server.NewJSConsumerMaxPendingAckPolicyRequiredError()
		}
		if cfg.Heartbeat > 0 && cfg.Heartbeat < 100*time.Millisecond {
			return server.NewJSConsumerSmallHeartbeatError()
		}
	} else {
		if cfg.Heartbeat > 0 {
			return server.NewJSConsumerHBRequiresPushError()
		}
		if cfg.FlowControl {
			return server.NewJSConsumerFCRequiresPushError()
		}
	}
	if cfg.FilterSubject != "" && len(cfg.FilterSubjects) > 0 {
		return server.NewJSConsumerDuplicateFilterSubjectsError()
	}
	if cfg.FilterSubject != "" && !server.IsValidSubject(cfg.FilterSubject) {
		return server.NewJSStreamInvalidConfigError(server.ErrBadSubject)
	}
	for i, f := range cfg.FilterSubjects {
		if f == "" {
			return server.NewJSConsumerEmptyFilterError()
		}
		if !server.IsValidSubject(f) {
			return server.NewJSStreamInvalidConfigError(server.ErrBadSubject)
		}
		for j, g := range cfg.FilterSubjects {
			if i != j && server.SubjectsCollide(f, g) && (server.SubjectMatchesFilter(f, g) || server.SubjectMatchesFilter(g, f)) {
				return server.NewJSConsumerOverlappingSubjectFiltersError()
			}
		}
	}
	switch cfg.DeliverPolicy {
	case server.DeliverAll:
		if cfg.OptStartSeq > 0 {
			return errDeliverStartSet("all", "sequence")
		}
		if cfg.OptStartTime != nil {
			return errDeliverStartSet("all", "time")
		}
	case server.DeliverLast:
		if cfg.OptStartSeq > 0 {
			return errDeliverStartSet("last", "sequence")
		}
		if cfg.OptStartTime != nil {
			return errDeliverStartSet("last", "time")
		}
	case server.DeliverLastPerSubject:
		if cfg.OptStartSeq > 0 {
			return errDeliverStartSet("last per subject", "sequence")
		}
		if cfg.OptStartTime != nil {
			return errDeliverStartSet("last per subject", "time")
		}
		if cfg.FilterSubject == "" && len(cfg.FilterSubjects) == 0 {
			return errDeliverNotSet("last per subject", "filter subject")
		}
	case server.DeliverNew:
		if cfg.OptStartSeq > 0 {
			return errDeliverStartSet("new", "sequence")
		}
		if cfg.OptStartTime != nil {
			return errDeliverStartSet("new", "time")
		}
	case server.DeliverByStartSequence:
		if cfg.OptStartSeq == 0 {
			return errDeliverNotSet("by start sequence", "start sequence")
		}
		if cfg.OptStartTime != nil {
			return errDeliverStartSet("by start sequence", "time")
		}
	case server.DeliverByStartTime:
		if cfg.OptStartTime == nil {
			return errDeliverNotSet("by start time", "start time")
		}
		if cfg.OptStartSeq != 0 {
			return errDeliverStartSet("by start time", "start sequence")
		}
	}
	if cfg.FlowControl && cfg.Heartbeat == 0 {
		return server.NewJSConsumerWithFlowControlNeedsHeartbeatsError()
	}
	if cfg.Durable != "" && cfg.Name != "" && cfg.Name != cfg.Durable {
		return server.NewJSConsumerCreateDurableAndNameMismatchError()
	}
	return nil
}

// unsupportedConsumer refuses what a real server would create but the
// bridge cannot serve: it has no consumer state to keep or acknowledge.
func (a *api) unsupportedConsumer(cfg *server.ConsumerConfig) *server.ApiError {
	var why string
	switch {
	case cfg.Durable != "":
		why = "durable consumers"
	case cfg.DeliverSubject == "":
		why = "pull consumers"
	case cfg.AckPolicy != server.AckNone:
		why = "acknowledged consumers (ack_policy " + ackPolicyName(cfg.AckPolicy) + ")"
	case cfg.DeliverGroup != "":
		why = "deliver_group"
	case cfg.DeliverPolicy == server.DeliverByStartTime:
		why = "deliver_policy by_start_time"
	case cfg.ReplayPolicy != server.ReplayInstant:
		why = "replay_policy original"
	case cfg.RateLimit > 0:
		why = "rate_limit_bps"
	case cfg.SampleFrequency != "":
		why = "sample_freq"
	case cfg.PauseUntil != nil && !cfg.PauseUntil.IsZero():
		why = "pause_until"
	case cfg.PriorityPolicy != server.PriorityNone || len(cfg.PriorityGroups) > 0:
		why = "priority groups"
	case cfg.Direct:
		why = "direct consumers"
	default:
		return nil
	}
	return errUnsupportedConsumer(why)
}

func ackPolicyName(p server.AckPolicy) string {
	b, err := p.MarshalJSON()
	if err != nil {
		return "unknown"
	}
	return strings.Trim(string(b), `"`)
}

// validConsumerName is nats-server's isValidAssetName.
func validConsumerName(name string) bool {
	return name != "" && !strings.ContainsAny(name, " \t\r\n\f.*>\\/")
}

// consumerDelete answers CONSUMER.DELETE.<stream>.<name>.
func (a *api) consumerDelete(streamName, name string, msg []byte) ([]byte, error) {
	resp := server.JSApiConsumerDeleteResponse{ApiResponse: server.ApiResponse{Type: server.JSApiConsumerDeleteResponseType}}
	fail := func(e *server.ApiError) ([]byte, error) {
		a.errs.Add(1)
		resp.Error = e
		return mustJSON(resp), nil
	}
	if !isEmptyRequest(msg) {
		return fail(server.NewJSNotEmptyRequestError())
	}
	c, apiErr, err := a.findConsumer(streamName, name)
	if err != nil {
		return nil, err
	} else if apiErr != nil {
		return fail(apiErr)
	}
	c.halt()
	a.cons.remove(c) // gone for the next request, even before run exits
	resp.Success = true
	return mustJSON(resp), nil
}

// findConsumer looks up consumer name of streamName, or says which of
// the two the server would report missing.
func (a *api) findConsumer(streamName, name string) (*consumer, *server.ApiError, error) {
	if _, ok, err := a.store.State(streamName); err != nil {
		return nil, nil, err
	} else if !ok || !validStreamName([]byte(streamName)) {
		return nil, server.NewJSStreamNotFoundError(), nil
	}
	var c *consumer
	if a.cons != nil {
		c = a.cons.lookup(streamName, name)
	}
	if c == nil {
		return nil, server.NewJSConsumerNotFoundError(), nil
	}
	return c, nil, nil
}

// consumerInfo answers CONSUMER.INFO.<stream>.<name>.
func (a *api) consumerInfo(streamName, name string) ([]byte, error) {
	resp := server.JSApiConsumerInfoResponse{ApiResponse: server.ApiResponse{Type: server.JSApiConsumerInfoResponseType}}
	fail := func(e *server.ApiError) ([]byte, error) {
		a.errs.Add(1)
		resp.Error = e
		return mustJSON(resp), nil
	}
	c, apiErr, err := a.findConsumer(streamName, name)
	if err != nil {
		return nil, err
	} else if apiErr != nil {
		return fail(apiErr)
	}
	resp.ConsumerInfo = c.info(a.now())
	return mustJSON(resp), nil
}
