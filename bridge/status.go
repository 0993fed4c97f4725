package bridge

// Status lines of Direct Get replies, exactly as nats-server v2.15 writes
// them (server/stream.go, processDirectGetRequest and getDirectRequest).
// A status reply is a header block with no payload.
var (
	statusEmptyRequest     = []byte("NATS/1.0 408 Empty Request\r\n\r\n")
	statusMalformedRequest = []byte("NATS/1.0 408 Malformed Request\r\n\r\n")
	statusBadRequest       = []byte("NATS/1.0 408 Bad Request\r\n\r\n")
	statusNotFound         = []byte("NATS/1.0 404 Message Not Found\r\n\r\n")
	// statusNotImplemented answers Direct Get modes the bridge does not
	// serve (batch, multi_last, start_time); the server has no such
	// reply, but silence would leave the client waiting for its timeout.
	statusNotImplemented = []byte("NATS/1.0 501 Not Implemented\r\n\r\n")
)

// noResponders is what nats-server sends a requester when no one is
// subscribed (client.go, processMsgResults): a Direct Get for a stream
// that does not exist finds no subscriber on a real server.
func noResponders(subject string) []byte {
	return []byte("NATS/1.0 503\r\nNats-Subject: " + subject + "\r\n\r\n")
}
