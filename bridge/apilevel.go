package bridge

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// A request may carry Nats-Required-Api-Level: N; a server whose API
// level (server.JSApiLevel) is below N, or that cannot read N, refuses
// it: Direct Gets with a 412 status, the JSON API with error 10185.

// errorOnRequiredApiLevel is nats-server's test (jetstream_versioning.go).
func errorOnRequiredApiLevel(hdr []byte) bool {
	v := sliceHeader(server.JSRequiredApiLevel, hdr)
	if len(v) == 0 {
		return false
	}
	min, err := strconv.Atoi(string(v))
	return err != nil || server.JSApiLevel < min
}

// levelError is the JSON API's refusal for the request kind rest (the
// subject after the prefix), in that API's response type; nil for
// subjects this file does not answer.
func levelError(rest string) []byte {
	e := server.NewJSRequiredApiLevelError()
	var resp any
	switch {
	case rest == "INFO":
		resp = server.JSApiAccountInfoResponse{ApiResponse: server.ApiResponse{Type: server.JSApiAccountInfoResponseType, Error: e}}
	case rest == "STREAM.NAMES":
		resp = server.JSApiStreamNamesResponse{ApiResponse: server.ApiResponse{Type: server.JSApiStreamNamesResponseType, Error: e}}
	case rest == "STREAM.LIST":
		resp = server.JSApiStreamListResponse{ApiResponse: server.ApiResponse{Type: server.JSApiStreamListResponseType, Error: e}, Streams: []*server.StreamInfo{}}
	case strings.HasPrefix(rest, "STREAM.INFO."):
		resp = server.JSApiStreamInfoResponse{ApiResponse: server.ApiResponse{Type: server.JSApiStreamInfoResponseType, Error: e}}
	case strings.HasPrefix(rest, "STREAM.MSG.GET."):
		resp = server.JSApiMsgGetResponse{ApiResponse: server.ApiResponse{Type: server.JSApiMsgGetResponseType, Error: e}}
	default:
		return nil
	}
	return mustJSON(resp)
}

// sliceHeader is nats-server's (client.go): the value of header key in
// a header block, matched case-sensitively at a line start.
func sliceHeader(key string, hdr []byte) []byte {
	i := headerKeyIndex(key, hdr)
	if i < 0 {
		return nil
	}
	i += len(key) + 1
	for i < len(hdr) && hdr[i] == ' ' {
		i++
	}
	start := i
	for i < len(hdr) {
		if hdr[i] == '\r' && i < len(hdr)-1 && hdr[i+1] == '\n' {
			break
		}
		i++
	}
	return hdr[start:i:i]
}

// headerKeyIndex is nats-server's getHeaderKeyIndex, quirks included: a
// first occurrence too close to the start ends the search.
func headerKeyIndex(key string, hdr []byte) int {
	if len(hdr) == 0 {
		return -1
	}
	bkey := []byte(key)
	offset := 0
	for {
		i := bytes.Index(hdr[offset:], bkey)
		if i < 2 {
			return -1
		}
		i += offset
		if i >= len(hdr)-1 || hdr[i-1] != '\n' || hdr[i-2] != '\r' {
			offset = i + len(key)
			continue
		}
		if i+len(key) >= len(hdr) {
			return -1
		}
		if hdr[i+len(key)] != ':' {
			offset = i + len(key)
			continue
		}
		return i
	}
}
