package stream

import (
	"errors"
	"math"
	"testing"
)

func TestParseID(t *testing.T) {
	cases := []struct {
		in      string
		missing uint64
		want    ID
		err     bool
	}{
		{"1-2", 0, ID{1, 2}, false},
		{"5", 0, ID{5, 0}, false},
		{"5", math.MaxUint64, ID{5, math.MaxUint64}, false},
		{"18446744073709551615-18446744073709551615", 0, MaxID, false},
		{"18446744073709551616", 0, ID{}, true},
		{"+1", 0, ID{1, 0}, false}, // strtoull takes a sign
		{" 1", 0, ID{1, 0}, false}, // and leading spaces
		{"01", 0, ID{1, 0}, false},
		{"1-+1", 0, ID{1, 1}, false},
		{"-1", 0, ID{}, true},
		{"1-", 0, ID{}, true},
		{"-0", 0, ID{}, true},
		{"0x10", 0, ID{}, true},
		{"1--5", 0, ID{}, true},
		{"1--05", 0, ID{1, math.MaxUint64 - 4}, false}, // strtoull wraps "-05"
		{"", 0, ID{}, true},
		{"a-1", 0, ID{}, true},
	}
	for _, c := range cases {
		got, err := ParseID([]byte(c.in), c.missing)
		if (err != nil) != c.err || (err == nil && got != c.want) {
			t.Errorf("ParseID(%q) = %v, %v; want %v, err=%v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestParseRangeBound(t *testing.T) {
	cases := []struct {
		in   string
		end  bool
		want ID
		err  error
	}{
		{"-", false, ID{}, nil},
		{"+", true, MaxID, nil},
		{"(-", false, ID{}, ErrInvalidID},
		{"(+", true, ID{}, ErrInvalidID},
		{"(0-0", false, ID{0, 1}, nil},
		{"(5", true, ID{5, math.MaxUint64 - 1}, nil},
		{"(5", false, ID{5, 1}, nil},
		{"(18446744073709551615-18446744073709551615", false, ID{}, ErrExclusiveEdge},
		{"(0-0", true, ID{}, ErrExclusiveEdge},
		{"(abc", false, ID{}, ErrInvalidID},
	}
	for _, c := range cases {
		got, err := ParseRangeBound([]byte(c.in), c.end)
		if !errors.Is(err, c.err) || (err == nil && got.ID != c.want) {
			t.Errorf("ParseRangeBound(%q, %v) = %v, %v; want %v, %v", c.in, c.end, got.ID, err, c.want, c.err)
		}
	}
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{"1-2", "0", "18446744073709551615-18446744073709551615", "1-*", "*", "-", "+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID([]byte(s), 0)
		if err != nil {
			return
		}
		// A parsed ID prints in canonical form and parses back to itself.
		back, err := ParseID([]byte(id.String()), 0)
		if err != nil || back != id {
			t.Fatalf("%q -> %v -> %v, %v", s, id, back, err)
		}
	})
}
