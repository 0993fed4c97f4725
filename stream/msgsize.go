package stream

// jetStreamMsgSize is what an entry of the stream at key adds to the
// stream's byte count (streamMeta.Bytes, SeqState.Bytes): the bytes
// nats-server's file store counts for the NATS message the entry maps to
// (fileStoreMsgSize), a 22-byte record header, the subject, the header
// block with its 4-byte length when there are headers, the payload and an
// 8-byte checksum.
//
// It is computed here, not in the bridge, because the count is stream
// metadata: every XADD, XDEL and trim changes it in the batch that
// changes the entries, so it never drifts, and a NATS client reads a
// stream's size without a walk of its entries. The mapping itself is the
// bridge's (bridge/message.go): the first field "data" is the payload,
// the first field "subject" the subject (else the key), every other field
// whose name is a HeaderName a header "name: value\r\n" in a block
// "NATS/1.0\r\n" … "\r\n". Only the lengths are counted here; the
// bridge's TestStateBytesMatchMessages holds the two to the same rule.
func jetStreamMsgSize(key []byte, fv [][]byte) uint64 {
	subject, data, headers := key, 0, 0
	seenSubject, seenData := false, false
	for i := 0; i+1 < len(fv); i += 2 {
		k, v := fv[i], fv[i+1]
		switch {
		case !seenData && string(k) == "data":
			seenData, data = true, len(v)
		case !seenSubject && string(k) == "subject":
			seenSubject, subject = true, v
		case HeaderName(k):
			headers += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	n := 22 + len(subject) + data + 8
	if headers > 0 {
		n += 4 + len("NATS/1.0\r\n") + headers + len("\r\n")
	}
	return uint64(n)
}

// HeaderName reports whether a field of that name is a header of the
// message its entry maps to: whether it can be a NATS header key (nats.go's
// rule: printable ASCII without ':'). It is here because the stream's byte
// count depends on it (jetStreamMsgSize); the bridge renders headers by
// it, so what a client receives is what the engine counted.
func HeaderName(k []byte) bool {
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
