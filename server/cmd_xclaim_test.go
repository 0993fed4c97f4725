package server

import (
	"reflect"
	"testing"

	"github.com/eddy-streams/eddy/stream"
)

func TestParseXClaim(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	id := func(ms, seq uint64) stream.ID { return stream.ID{Ms: ms, Seq: seq} }
	last := id(9, 0)
	tests := []struct {
		line string
		want stream.ClaimArgs
		err  string
	}{
		{line: "xclaim s g c 0 1-0", want: stream.ClaimArgs{IDs: []stream.ID{id(1, 0)}}},
		{line: "xclaim s g c -5 1 1 2-3", want: stream.ClaimArgs{IDs: []stream.ID{id(1, 0), id(1, 0), id(2, 3)}}},
		{line: "xclaim s g c 100 1 IDLE 5 TIME 7", want: stream.ClaimArgs{MinIdle: 100, IDs: []stream.ID{id(1, 0)}, Time: i64(7)}},
		{line: "xclaim s g c 0 1 time 7 idle 5", want: stream.ClaimArgs{IDs: []stream.ID{id(1, 0)}, Idle: i64(5)}},
		{line: "xclaim s g c 0 1 retrycount 3 force justid lastid 9", want: stream.ClaimArgs{IDs: []stream.ID{id(1, 0)},
			RetryCount: i64(3), Force: true, JustID: true, LastID: &last}},
		{line: "xclaim s g c x 1", err: errXClaimMinIdle},
		{line: "xclaim s g c 0 bad", err: "ERR Unrecognized XCLAIM option 'bad'"},
		{line: "xclaim s g c 0 1 2 idle 5 3", err: "ERR Unrecognized XCLAIM option '3'"},
		{line: "xclaim s g c 0 1 -", err: "ERR Unrecognized XCLAIM option '-'"},
		{line: "xclaim s g c 0 1 idle", err: "ERR Unrecognized XCLAIM option 'idle'"},
		{line: `xclaim s g c 0 1 "a\r\nb"`, err: "ERR Unrecognized XCLAIM option 'a  b'"},
		{line: "xclaim s g c 0 1 idle x", err: errXClaimIdle},
		{line: "xclaim s g c 0 1 time x", err: errXClaimTime},
		{line: "xclaim s g c 0 1 retrycount x", err: errXClaimRetryCount},
		{line: "xclaim s g c 0 1 lastid x", err: errInvalidStreamID},
		{line: "xclaim s g c 0 1 lastid +", err: errInvalidStreamID},
	}
	for _, tc := range tests {
		got, err := parseXClaim(argv(t, tc.line))
		if err != tc.err || (err == "" && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("%s: got %+v %q, want %+v %q", tc.line, got, err, tc.want, tc.err)
		}
	}
}

func TestParseXAutoClaim(t *testing.T) {
	tests := []struct {
		line string
		want stream.AutoClaimArgs
		err  string
	}{
		{line: "xautoclaim s g c 0 0", want: stream.AutoClaimArgs{Count: 100}},
		{line: "xautoclaim s g c -5 (1 count 3 justid", want: stream.AutoClaimArgs{Start: stream.ID{Ms: 1, Seq: 1}, Count: 3, JustID: true}},
		{line: "xautoclaim s g c 7 + COUNT 1 COUNT 2", want: stream.AutoClaimArgs{MinIdle: 7, Start: stream.MaxID, Count: 2}},
		{line: "xautoclaim s g c 0 0 count 576460752303423487", want: stream.AutoClaimArgs{Count: xautoclaimMaxCount}},
		{line: "xautoclaim s g c x 0", err: errXAutoClaimMinIdle},
		{line: "xautoclaim s g c x bad foo", err: errXAutoClaimMinIdle},
		{line: "xautoclaim s g c 0 bad", err: errInvalidStreamID},
		{line: "xautoclaim s g c 0 (18446744073709551615-18446744073709551615", err: errInvalidStartID},
		{line: "xautoclaim s g c 0 0 count 0", err: errXAutoClaimCount},
		{line: "xautoclaim s g c 0 0 count x", err: errXAutoClaimCount},
		{line: "xautoclaim s g c 0 0 count 576460752303423488", err: errXAutoClaimCount},
		{line: "xautoclaim s g c 0 0 count", err: errSyntax},
		{line: "xautoclaim s g c 0 0 foo", err: errSyntax},
	}
	for _, tc := range tests {
		got, err := parseXAutoClaim(argv(t, tc.line))
		if err != tc.err || (err == "" && got != tc.want) {
			t.Errorf("%s: got %+v %q, want %+v %q", tc.line, got, err, tc.want, tc.err)
		}
	}
}
