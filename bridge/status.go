package bridge

import "fmt"

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
