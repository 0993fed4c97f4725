package server

import (
	"math"
	"testing"

	"github.com/eddy-streams/eddy/stream"
)

// Expected error texts were read from redis-server 7.0.15 (see checkRedis).
func TestParseXRange(t *testing.T) {
	max := stream.MaxID
	tests := []struct {
		line string
		want xrangeArgs
		err  string
	}{
		{line: "xrange k - +", want: xrangeArgs{end: max, count: -1}},
		{line: "xrange k 1 2", want: xrangeArgs{start: stream.ID{Ms: 1}, end: stream.ID{Ms: 2, Seq: math.MaxUint64}, count: -1}},
		{line: "xrange k 1-5 2-6", want: xrangeArgs{start: stream.ID{Ms: 1, Seq: 5}, end: stream.ID{Ms: 2, Seq: 6}, count: -1}},
		{line: "xrange k (1-5 (2-6", want: xrangeArgs{start: stream.ID{Ms: 1, Seq: 6}, end: stream.ID{Ms: 2, Seq: 5}, count: -1}},
		{line: "xrange k (1 (2", want: xrangeArgs{start: stream.ID{Ms: 1, Seq: 1}, end: stream.ID{Ms: 2, Seq: math.MaxUint64 - 1}, count: -1}},
		{line: "xrange k (0-0 +", want: xrangeArgs{start: stream.ID{Seq: 1}, end: max, count: -1}},
		{line: "xrange k - (18446744073709551615-18446744073709551615", want: xrangeArgs{end: stream.ID{Ms: math.MaxUint64, Seq: math.MaxUint64 - 1}, count: -1}},
		{line: "xrange k (18446744073709551615 +", want: xrangeArgs{start: stream.ID{Ms: math.MaxUint64, Seq: 1}, end: max, count: -1}},
		{line: "xrange k - (0", want: xrangeArgs{end: stream.ID{Seq: math.MaxUint64 - 1}, count: -1}},
		{line: "xrange k - + count 5", want: xrangeArgs{end: max, count: 5}},
		{line: "xrange k - + COUNT 1 count 2", want: xrangeArgs{end: max, count: 2}},
		{line: "xrange k - + count 0", want: xrangeArgs{end: max, count: 0}},
		{line: "xrange k - + count -1", want: xrangeArgs{end: max, count: 0}},
		{line: "xrange k - + count -9223372036854775808", want: xrangeArgs{end: max, count: 0}},
		{line: "xrange k - + count 9223372036854775807", want: xrangeArgs{end: max, count: math.MaxInt64}},
		{line: "xrevrange k + -", want: xrangeArgs{end: max, count: -1}},
		{line: "xrevrange k (3-1 (1-1", want: xrangeArgs{start: stream.ID{Ms: 1, Seq: 2}, end: stream.ID{Ms: 3}, count: -1}},
		{line: "xrevrange k - (0-0", want: xrangeArgs{start: stream.ID{Seq: 1}, end: stream.ID{}, count: -1}},

		{line: "xrange k - + count", err: errSyntax},
		{line: "xrange k - + foo", err: errSyntax},
		{line: "xrange k - + count 1 foo", err: errSyntax},
		{line: "xrange k - + count abc", err: errValueNotInteger},
		{line: "xrange k - + count -0", err: errValueNotInteger},
		{line: "xrange k - + count 9223372036854775808", err: errValueNotInteger},
		{line: "xrange k abc +", err: errInvalidStreamID},
		{line: "xrange k - abc", err: errInvalidStreamID},
		{line: "xrange k (- +", err: errInvalidStreamID},
		{line: "xrange k - (+", err: errInvalidStreamID},
		{line: "xrange k ( +", err: errInvalidStreamID},
		{line: "xrange k 5-* +", err: errInvalidStreamID},
		{line: "xrange k - (0-0", err: errInvalidEndID},
		{line: "xrange k (18446744073709551615-18446744073709551615 +", err: errInvalidStartID},
		{line: "xrange k (18446744073709551615-18446744073709551615 (0-0", err: errInvalidStartID},
		{line: "xrange k (18446744073709551615-18446744073709551615 abc", err: errInvalidStartID},
		{line: "xrange k abc (0-0", err: errInvalidStreamID},
		{line: "xrange k (0-0 abc", err: errInvalidStreamID},
		{line: "xrange k 1-1 x count abc", err: errInvalidStreamID},
		{line: "xrange k 1-1 + count abc", err: errValueNotInteger},
		// XREVRANGE takes end first but parses the start bound first.
		{line: "xrevrange k (0-0 +", err: errInvalidEndID},
		{line: "xrevrange k + (18446744073709551615-18446744073709551615", err: errInvalidStartID},
		{line: "xrevrange k (0-0 (18446744073709551615-18446744073709551615", err: errInvalidStartID},
		{line: "xrevrange k (0-0 abc", err: errInvalidStreamID},
		{line: "xrevrange k + - count x", err: errValueNotInteger},
	}
	for _, tt := range tests {
		checkRedis(t, nil, tt.line, tt.err)
		args := argv(t, tt.line)
		a, errText := parseXRange(args, argIs(args[0], "xrevrange"))
		if errText != tt.err {
			t.Errorf("%s: error %q, want %q", tt.line, errText, tt.err)
			continue
		}
		if tt.err == "" && a != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.line, a, tt.want)
		}
	}
}

// TestXRangeReplies compares whole replies with what redis-server 7.0.15
// sent for the same lines.
func TestXRangeReplies(t *testing.T) {
	h := newStreamHarness(t, 2)
	h.expect("xadd s 1-1 a 1", "$3\r\n1-1\r\n")
	h.expect("xadd s 2-1 b 2 c 3", "$3\r\n2-1\r\n")
	h.expect("xadd s 3-1 \"\" \"\"", "$3\r\n3-1\r\n")
	h.expect("xrange s - +", "*3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$0\r\n\r\n$0\r\n\r\n")
	h.expect("xrange s - + count 0", "*-1\r\n")
	h.expect("xrange nokey - + count 0", "*0\r\n")
	h.expect("xrange s - + count 2", "*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xrange s (1-1 +", "*2\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$0\r\n\r\n$0\r\n\r\n")
	h.expect("xrange s 2 2", "*1\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n")
	h.expect("xrevrange s + -", "*3\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$0\r\n\r\n$0\r\n\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")
	h.expect("xrevrange s + - count 1", "*1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$0\r\n\r\n$0\r\n\r\n")
	h.expect("xrevrange s (3-1 -", "*2\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")
	h.expect("xrange s 5 +", "*0\r\n")
	h.expect("xrange s 3 1", "*0\r\n")
	h.expect("xrange nokey - +", "*0\r\n")
	h.expect("xrange s - (0-0", "-ERR invalid end ID for the interval\r\n")
}

func TestXRangeRepliesRESP3(t *testing.T) {
	h := newStreamHarness(t, 3)
	h.expect("xadd s 1-1 a 1", "$3\r\n1-1\r\n")
	h.expect("xrange s - + count 0", "_\r\n")
	h.expect("xrevrange s + - count -1", "_\r\n")
	h.expect("xrange nokey - + count 0", "*0\r\n")
	h.expect("xrange s - +", "*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")
}
