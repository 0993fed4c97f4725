package server

import (
	"math"
	"reflect"
	"testing"

	"github.com/eddy-streams/eddy/stream"
)

// Expected error texts were read from redis-server 7.0.15 given the same
// lines (with the key absent, so only parsing can fail).
func TestParseXAdd(t *testing.T) {
	tests := []struct {
		line   string
		want   stream.XAddArgs // Fields filled from fields below
		fields string
		err    string
	}{
		{line: "xadd k * f v", want: stream.XAddArgs{Auto: true}, fields: "f v"},
		{line: "xadd k * f v g w", want: stream.XAddArgs{Auto: true}, fields: "f v g w"},
		{line: "xadd k 1-2 f v", want: stream.XAddArgs{ID: stream.ID{Ms: 1, Seq: 2}}, fields: "f v"},
		{line: "xadd k 5 f v", want: stream.XAddArgs{ID: stream.ID{Ms: 5}}, fields: "f v"},
		{line: "xadd k 5-* f v", want: stream.XAddArgs{ID: stream.ID{Ms: 5}, SeqAuto: true}, fields: "f v"},
		{line: "xadd k 0-* f v", want: stream.XAddArgs{SeqAuto: true}, fields: "f v"},
		{line: "xadd k 0-1 f v", want: stream.XAddArgs{ID: stream.ID{Seq: 1}}, fields: "f v"},
		{line: "xadd k 18446744073709551615-18446744073709551615 f v", want: stream.XAddArgs{ID: stream.MaxID}, fields: "f v"},
		{line: `xadd k * "" ""`, want: stream.XAddArgs{Auto: true}, fields: `"" ""`},
		{line: "xadd k * maxlen 1", want: stream.XAddArgs{Auto: true}, fields: "maxlen 1"},
		{line: "xadd k NOMKSTREAM * f v", want: stream.XAddArgs{Auto: true, NoMkStream: true}, fields: "f v"},
		{line: "xadd k nomkstream nomkstream * f v", want: stream.XAddArgs{Auto: true, NoMkStream: true}, fields: "f v"},
		{line: "xadd k maxlen 10 * f v", want: stream.XAddArgs{Auto: true, Trim: stream.Trim{Strategy: stream.TrimMaxLen, MaxLen: 10}}, fields: "f v"},
		{line: "xadd k MAXLEN = 10 * f v", want: stream.XAddArgs{Auto: true, Trim: stream.Trim{Strategy: stream.TrimMaxLen, MaxLen: 10}}, fields: "f v"},
		{line: "xadd k maxlen ~ 0 * f v", want: stream.XAddArgs{Auto: true, Trim: stream.Trim{Strategy: stream.TrimMaxLen, Approx: true}}, fields: "f v"},
		{line: "xadd k maxlen ~ 10 limit 5 * f v", want: stream.XAddArgs{Auto: true, Trim: stream.Trim{Strategy: stream.TrimMaxLen, Approx: true, MaxLen: 10, Limit: 5, LimitGiven: true}}, fields: "f v"},
		{line: "xadd k limit 0 maxlen ~ 10 * f v", want: stream.XAddArgs{Auto: true, Trim: stream.Trim{Strategy: stream.TrimMaxLen, Approx: true, MaxLen: 10, LimitGiven: true}}, fields: "f v"},
		{line: "xadd k minid 5 * f v", want: stream.XAddArgs{Auto: true, Trim: stream.Trim{Strategy: stream.TrimMinID, MinID: stream.ID{Ms: 5}}}, fields: "f v"},
		{line: "xadd k minid ~ 5-3 nomkstream 7-1 f v", want: stream.XAddArgs{ID: stream.ID{Ms: 7, Seq: 1}, NoMkStream: true, Trim: stream.Trim{Strategy: stream.TrimMinID, Approx: true, MinID: stream.ID{Ms: 5, Seq: 3}}}, fields: "f v"},
		{line: "xadd k maxlen 9223372036854775807 * f v", want: stream.XAddArgs{Auto: true, Trim: stream.Trim{Strategy: stream.TrimMaxLen, MaxLen: math.MaxInt64}}, fields: "f v"},
		// MINID ~ with one argument left reads "~" as the threshold.
		{line: "xadd k nomkstream minid ~ f v", err: errInvalidStreamID},

		{line: "xadd k 0-0 f v", err: errXAddZero},
		{line: "xadd k 0 f v", err: errXAddZero},
		{line: "xadd k 0-0 f", err: errWrongArity("xadd")},
		{line: "xadd k * f", err: errWrongArity("xadd")},
		{line: "xadd k * f v g", err: errWrongArity("xadd")},
		{line: "xadd k nomkstream * f", err: errWrongArity("xadd")},
		{line: "xadd k nomkstream nomkstream nomkstream", err: errWrongArity("xadd")},
		{line: "xadd k maxlen 1 maxlen", err: errInvalidStreamID},
		{line: "xadd k abc f v", err: errInvalidStreamID},
		{line: "xadd k - f v", err: errInvalidStreamID},
		{line: "xadd k + f v", err: errInvalidStreamID},
		{line: "xadd k 1-2-3 f v", err: errInvalidStreamID},
		{line: "xadd k *-1 f v", err: errInvalidStreamID},
		{line: "xadd k ** f v", err: errInvalidStreamID},
		{line: "xadd k 18446744073709551616-0 f v", err: errInvalidStreamID},
		{line: "xadd k f v x y", err: errInvalidStreamID},
		{line: "xadd k maxlen f v", err: errValueNotInteger},
		{line: "xadd k maxlen 1 f v", err: errInvalidStreamID},
		{line: "xadd k maxlen -1 * f v", err: errMaxLenNegative},
		{line: "xadd k maxlen +1 * f v", err: errValueNotInteger},
		{line: "xadd k maxlen 01 * f v", err: errValueNotInteger},
		{line: `xadd k maxlen " 1" * f v`, err: errValueNotInteger},
		{line: "xadd k maxlen 9223372036854775808 * f v", err: errValueNotInteger},
		{line: "xadd k maxlen ~ * f v", err: errValueNotInteger},
		{line: "xadd k MAXLEN ~ = 10 * f v", err: errValueNotInteger},
		{line: "xadd k maxlen 1 limit 5 * f v", err: errLimitNoApprox},
		{line: "xadd k maxlen = 1 limit 5 * f v", err: errLimitNoApprox},
		{line: "xadd k limit 5 * f v", err: errLimitNoStrategy},
		{line: "xadd k limit 0 * f v", err: errLimitNoApprox},
		{line: "xadd k limit -1 * f v", err: errLimitNegative},
		{line: "xadd k limit x * f v", err: errValueNotInteger},
		{line: "xadd k maxlen 1 minid 5 * f v", err: errTrimBoth},
		{line: "xadd k minid 1 maxlen 5 * f v", err: errTrimBoth},
		{line: "xadd k maxlen 1 maxlen 5 * f v", err: errTrimBoth},
		{line: "xadd k minid - * f v", err: errInvalidStreamID},
		{line: "xadd k minid + * f v", err: errInvalidStreamID},
		{line: "xadd k minid abc * f v", err: errInvalidStreamID},
		{line: "xadd k minid ~ 5-* * f v", err: errInvalidStreamID},
		// Errors come in argument order: the first bad option wins.
		{line: "xadd k maxlen abc limit -1 * f v", err: errValueNotInteger},
		{line: "xadd k limit -1 maxlen abc * f v", err: errLimitNegative},
		{line: "xadd k maxlen 1 limit 5 abc f v", err: errInvalidStreamID},
	}
	for _, tt := range tests {
		checkRedis(t, nil, tt.line, tt.err)
		a, errText := parseXAdd(argv(t, tt.line))
		if errText != tt.err {
			t.Errorf("%s: error %q, want %q", tt.line, errText, tt.err)
			continue
		}
		if tt.err != "" {
			continue
		}
		want := tt.want
		want.Fields = argv(t, tt.fields)
		if !reflect.DeepEqual(a, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.line, a, want)
		}
	}
}
