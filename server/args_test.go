package server

import (
	"math"
	"testing"
)

func TestParseRedisInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"-1", -1, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"-0", 0, false},
		{"+1", 0, false},
		{"01", 0, false},
		{"00", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1.5", 0, false},
		{"1e3", 0, false},
		{"abc", 0, false},
		{"0x10", 0, false},
		{"1\x00", 0, false},
		// As CONFIG SET's integer directives read them.
		{"5", 5, true},
		{"-5", -5, true},
		{"05", 0, false},
		{"+5", 0, false},
		{" 5", 0, false},
		{"5 ", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseRedisInt([]byte(tt.in))
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseRedisInt(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestArgIs(t *testing.T) {
	tests := []struct {
		arg, kw string
		want    bool
	}{
		{"maxlen", "maxlen", true},
		{"MAXLEN", "maxlen", true},
		{"MaXlEn", "maxlen", true},
		{"maxlen ", "maxlen", false},
		{"maxle", "maxlen", false},
		// strcasecmp folds ASCII only; Unicode folding would take these.
		{"nomk\u017ftream", "nomkstream", false},
		{"\u212aEY", "key", false},
	}
	for _, tt := range tests {
		if got := argIs([]byte(tt.arg), tt.kw); got != tt.want {
			t.Errorf("argIs(%q, %q) = %v, want %v", tt.arg, tt.kw, got, tt.want)
		}
	}
}

func TestNameIs(t *testing.T) {
	tests := []struct {
		s, kw string
		want  bool
	}{
		{"appendfsync", "appendfsync", true},
		{"AppendFsync", "appendfsync", true},
		{"EverySec", "everysec", true},
		{"appendfsyn", "appendfsync", false},
		{"\u017ftream-node-max-bytes", "stream-node-max-bytes", false},
	}
	for _, tt := range tests {
		if got := nameIs(tt.s, tt.kw); got != tt.want {
			t.Errorf("nameIs(%q, %q) = %v, want %v", tt.s, tt.kw, got, tt.want)
		}
	}
}

func TestLower(t *testing.T) {
	tests := []struct{ in, want string }{
		{"get", "get"},
		{"GET", "get"},
		{"xInfo", "xinfo"},
		{"\u212aEYS", "\u212aeys"}, // Redis folds ASCII only: no command
		{"A\xffB", "a\xffb"},
	}
	for _, tt := range tests {
		if got := lower([]byte(tt.in)); got != tt.want {
			t.Errorf("lower(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
