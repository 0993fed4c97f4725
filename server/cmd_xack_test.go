package server

import (
	"testing"

	"github.com/eddy-streams/eddy/stream"
)

func TestParseXPending(t *testing.T) {
	max := stream.MaxID
	tests := []struct {
		line string
		want xpendingArgs
		err  string
	}{
		{line: "xpending s g", want: xpendingArgs{summary: true}},
		{line: "xpending s g - + 10", want: xpendingArgs{rng: stream.PendingRangeArgs{End: max, Count: 10}}},
		{line: "xpending s g - + -1", want: xpendingArgs{rng: stream.PendingRangeArgs{End: max}}},
		{line: "xpending s g 1 2 3 c", want: xpendingArgs{rng: stream.PendingRangeArgs{Start: stream.ID{Ms: 1},
			End: stream.ID{Ms: 2, Seq: max.Seq}, Count: 3, Consumer: []byte("c"), HasConsumer: true}}},
		{line: "xpending s g (1 (2 3", want: xpendingArgs{rng: stream.PendingRangeArgs{Start: stream.ID{Ms: 1, Seq: 1},
			End: stream.ID{Ms: 2, Seq: max.Seq - 1}, Count: 3}}},
		{line: "xpending s g IDLE 50 - + 10 c", want: xpendingArgs{rng: stream.PendingRangeArgs{MinIdle: 50,
			End: max, Count: 10, Consumer: []byte("c"), HasConsumer: true}}},
		{line: "xpending s g - + 10 c e1 e2", want: xpendingArgs{rng: stream.PendingRangeArgs{End: max, Count: 10,
			Consumer: []byte("c"), HasConsumer: true}}},
		{line: "xpending s g - +", err: errSyntax},
		{line: "xpending s g idle 5", err: errSyntax},
		{line: "xpending s g idle 5 - +", err: errSyntax},
		{line: "xpending s g idle x - +", err: errValueNotInteger},
		{line: "xpending s g - + 10 c e1 e2 e3", err: errSyntax},
		{line: "xpending s g bad + x", err: errValueNotInteger},
		{line: "xpending s g bad + 1", err: errInvalidStreamID},
		{line: "xpending s g - bad 1", err: errInvalidStreamID},
		{line: "xpending s g (18446744073709551615-18446744073709551615 + 1", err: errInvalidStartID},
		{line: "xpending s g - (0-0 1", err: errInvalidEndID},
	}
	for _, tc := range tests {
		got, err := parseXPending(argv(t, tc.line))
		if err != tc.err {
			t.Errorf("%s: error %q, want %q", tc.line, err, tc.err)
			continue
		}
		if err == "" && (got.summary != tc.want.summary || got.rng.Start != tc.want.rng.Start ||
			got.rng.End != tc.want.rng.End || got.rng.Count != tc.want.rng.Count ||
			got.rng.MinIdle != tc.want.rng.MinIdle || got.rng.HasConsumer != tc.want.rng.HasConsumer ||
			string(got.rng.Consumer) != string(tc.want.rng.Consumer)) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.line, got, tc.want)
		}
	}
}

func TestWritePendingSummary(t *testing.T) {
	for _, tc := range []struct {
		proto int
		sum   stream.PendingSummary
		want  string
	}{
		{2, stream.PendingSummary{}, "*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"},
		{3, stream.PendingSummary{}, "*4\r\n:0\r\n_\r\n_\r\n_\r\n"},
		{2, stream.PendingSummary{Count: 3, First: stream.ID{Ms: 3}, Last: stream.ID{Ms: 5},
			Consumers: []stream.ConsumerPending{{Name: []byte("c"), Pending: 1}, {Name: []byte("d"), Pending: 2}}},
			"*4\r\n:3\r\n$3\r\n3-0\r\n$3\r\n5-0\r\n*2\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n*2\r\n$1\r\nd\r\n$1\r\n2\r\n"},
	} {
		w := &replyWriter{proto: tc.proto}
		writePendingSummary(w, tc.sum)
		if string(w.buf) != tc.want {
			t.Errorf("RESP%d %+v: %q, want %q", tc.proto, tc.sum, w.buf, tc.want)
		}
	}
}
