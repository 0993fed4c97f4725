package bridge

import (
	"time"

	"github.com/eddy-streams/eddy/stream"
)

// The NATS message an entry maps to: the payload is the first field
// "data", the subject the first field "subject" (else the stream's key:
// stream.SeqEntry.Subject), every other field whose name can be a header
// key (stream.HeaderName) a header of that name, in the entry's order;
// the time is the entry ID's milliseconds. The engine counts a stream's
// bytes by the same rule (stream/msgsize.go; TestStateBytesMatchMessages
// holds the two together).

// payload is the entry's first field "data", nil when it has none.
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
	eachHeader(e.Fields, func(k, v []byte) {
		dst = append(dst, k...)
		dst = append(dst, ": "...)
		for _, c := range v {
			if c == '\r' || c == '\n' {
				c = ' '
			}
			dst = append(dst, c)
		}
		dst = append(dst, "\r\n"...)
	})
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

// eachHeader calls header with every field that becomes a header of the
// entry's message, in order: all but the first "data", the first
// "subject" and those whose names cannot be header keys
// (stream.HeaderName).
func eachHeader(fv [][]byte, header func(k, v []byte)) {
	seenData, seenSubject := false, false
	for i := 0; i+1 < len(fv); i += 2 {
		switch k := fv[i]; {
		case !seenData && string(k) == "data":
			seenData = true
		case !seenSubject && string(k) == "subject":
			seenSubject = true
		case stream.HeaderName(k):
			header(k, fv[i+1])
		}
	}
}
