package bridge

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
)

// Status lines of Direct Get replies, exactly as nats-server v2.15 writes
// them (server/stream.go, processDirectGetRequest and getDirectRequest).
// A status reply is a header block with no payload.
var (
	statusEmptyRequest     = []byte("NATS/1.0 408 Empty Request\r\n\r\n")
	statusMalformedRequest = []byte("NATS/1.0 408 Malformed Request\r\n\r\n")
	statusBadRequest       = []byte("NATS/1.0 408 Bad Request\r\n\r\n")
	statusNotFound         = []byte("NATS/1.0 404 Message Not Found\r\n\r\n")
	statusRequiredApiLevel = []byte("NATS/1.0 412 Required Api Level\r\n\r\n")
	// A multi_last get that matches nothing, or too many subjects.
	statusNoResults      = []byte("NATS/1.0 404 No Results\r\n\r\n")
	statusTooManyResults = []byte("NATS/1.0 413 Too Many Results\r\n\r\n")
)

// noResponders is what nats-server sends a requester when no one is
// subscribed (client.go, processMsgResults): a Direct Get for a stream
// that does not exist finds no subscriber on a real server.
func noResponders(subject string) []byte {
	return []byte("NATS/1.0 503\r\nNats-Subject: " + subject + "\r\n\r\n")
}

// idleHeartbeat is a push consumer's heartbeat while it has nothing to
// deliver (consumer.go, sendIdleHeartbeat): the last delivery and stream
// sequences, no reply subject, no payload.
func idleHeartbeat(lastDelivered, lastStream uint64) []byte {
	return fmt.Appendf(nil, "NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: %d\r\nNats-Last-Stream: %d\r\n\r\n", lastDelivered, lastStream)
}

// statusReadFailed is a Direct Get's reply when the store fails: what
// nats-server sends when a read fails inside JetStream, the error's text
// on one line.
func statusReadFailed(err error) []byte {
	return []byte("NATS/1.0 500 " + oneLine(err.Error()) + "\r\n\r\n")
}

// statusEOB ends a batch Direct Get (getDirectRequest): the messages
// still pending and the sequence of the last one sent.
func statusEOB(pending, lastSeq uint64) []byte {
	return fmt.Appendf(nil, "NATS/1.0 204 EOB\r\nNats-Num-Pending: %d\r\nNats-Last-Sequence: %d\r\n\r\n", pending, lastSeq)
}

// statusEOBUpTo ends a multi_last Direct Get (getDirectMulti): as
// statusEOB, and the sequence the answer is up to.
func statusEOBUpTo(pending, lastSeq, upTo uint64) []byte {
	return fmt.Appendf(nil, "NATS/1.0 204 EOB\r\nNats-Num-Pending: %d\r\nNats-Last-Sequence: %d\r\nNats-UpTo-Sequence: %d\r\n\r\n", pending, lastSeq, upTo)
}

// JetStream API errors the bridge words itself. Those nats-server words
// come from its own constructors (server.NewJS…Error); the descriptions
// below are either nats-server's texts that it builds inline
// (checkConsumerCfg) or the bridge's own refusals.

// apiReadFailed is an API request's reply when the store fails: what
// nats-server answers when a read fails inside JetStream.
func apiReadFailed(err error) []byte {
	return mustJSON(server.ApiResponse{Type: "io.nats.jetstream.api.v1.error", Error: &server.ApiError{Code: 500, Description: err.Error()}})
}

// errConsumerNameInvalid is checkConsumerCfg's refusal of a consumer name
// that is not a valid asset name.
func errConsumerNameInvalid() *server.ApiError {
	return server.NewJSStreamInvalidConfigError(errors.New("consumer name can not contain '.', '*', '>', '\\', '/'"))
}

// errDeliverStartSet is checkConsumerCfg's refusal of an optional start
// (start: "sequence", "time", …) that deliver policy dp does not take.
func errDeliverStartSet(dp, start string) *server.ApiError {
	return server.NewJSConsumerInvalidPolicyError(fmt.Errorf("consumer delivery policy is deliver %s, but optional start %s is also set", dp, start))
}

// errDeliverNotSet is checkConsumerCfg's refusal of a deliver policy dp
// without the option it needs.
func errDeliverNotSet(dp, option string) *server.ApiError {
	return server.NewJSConsumerInvalidPolicyError(fmt.Errorf("consumer delivery policy is deliver %s, but optional %s is not set", dp, option))
}

// errPushUnavailable refuses a consumer while the bridge cannot deliver
// push messages; why says what is missing.
func errPushUnavailable(why string) *server.ApiError {
	return server.NewJSConsumerCreateError(fmt.Errorf("push consumers are not available on this Eddy bridge: %s", why))
}

// errBridgeClosing refuses a consumer created while the bridge closes.
func errBridgeClosing() *server.ApiError {
	return server.NewJSConsumerCreateError(errors.New("the bridge is closing"))
}

// errUnsupportedConsumer refuses a consumer a real server would create
// but the bridge cannot serve; what names the feature, in the plural.
func errUnsupportedConsumer(what string) *server.ApiError {
	return server.NewJSConsumerCreateError(fmt.Errorf("%s are not supported by the Eddy bridge", what))
}
