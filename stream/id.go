package stream

import (
	"errors"
	"math"
	"strconv"
)

// ID is a stream entry ID: milliseconds and a sequence number.
type ID struct{ Ms, Seq uint64 }

// MaxID is the largest ID a stream can hold.
var MaxID = ID{math.MaxUint64, math.MaxUint64}

// Errors from ID parsing.
var (
	// ErrInvalidID: the text is not a stream ID (Redis: "Invalid stream ID
	// specified as stream command argument").
	ErrInvalidID = errors.New("stream: invalid stream ID")
)

// Compare returns -1, 0 or +1.
func (a ID) Compare(b ID) int {
	switch {
	case a.Ms < b.Ms:
		return -1
	case a.Ms > b.Ms:
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// Less reports a < b.
func (a ID) Less(b ID) bool { return a.Compare(b) < 0 }

// IsZero reports whether a is 0-0.
func (a ID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Next returns the smallest ID greater than a, and false if a is MaxID.
func (a ID) Next() (ID, bool) {
	if a.Seq < math.MaxUint64 {
		return ID{a.Ms, a.Seq + 1}, true
	}
	if a.Ms < math.MaxUint64 {
		return ID{a.Ms + 1, 0}, true
	}
	return a, false
}

// Prev returns the largest ID smaller than a, and false if a is 0-0.
func (a ID) Prev() (ID, bool) {
	if a.Seq > 0 {
		return ID{a.Ms, a.Seq - 1}, true
	}
	if a.Ms > 0 {
		return ID{a.Ms - 1, math.MaxUint64}, true
	}
	return a, false
}

// String formats the ID as Redis does: "ms-seq".
func (a ID) String() string { return string(a.Append(nil)) }

// Append appends the textual form of a.
func (a ID) Append(dst []byte) []byte {
	dst = strconv.AppendUint(dst, a.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, a.Seq, 10)
}

// ParseID parses "ms-seq" or "ms"; a missing sequence takes missingSeq
// (0 for a start bound, MaxUint64 for an end bound). It accepts exactly
// what Redis's streamParseID accepts for a non-special ID.
func ParseID(s []byte, missingSeq uint64) (ID, error) {
	id, _, err := parseID(s, missingSeq, false)
	return id, err
}

// ParseAddID parses the ID argument of XADD: "*", "ms-*", "ms-seq" or
// "ms". auto is true for "*"; seqAuto is true for "ms-*".
func ParseAddID(s []byte) (id ID, auto, seqAuto bool, err error) {
	if len(s) == 1 && s[0] == '*' {
		return ID{}, true, false, nil
	}
	id, seqAuto, err = parseID(s, 0, true)
	return id, false, seqAuto, err
}

func parseID(s []byte, missingSeq uint64, allowSeqStar bool) (ID, bool, error) {
	// Redis refuses IDs longer than 127 bytes before parsing.
	if len(s) > 127 {
		return ID{}, false, ErrInvalidID
	}
	for i, c := range s {
		if c != '-' {
			continue
		}
		ms, ok := parseUint(s[:i])
		if !ok {
			return ID{}, false, ErrInvalidID
		}
		rest := s[i+1:]
		if allowSeqStar && len(rest) == 1 && rest[0] == '*' {
			return ID{Ms: ms}, true, nil
		}
		seq, ok := parseUint(rest)
		if !ok {
			return ID{}, false, ErrInvalidID
		}
		return ID{ms, seq}, false, nil
	}
	ms, ok := parseUint(s)
	if !ok {
		return ID{}, false, ErrInvalidID
	}
	return ID{ms, missingSeq}, false, nil
}

// parseUint accepts exactly what Redis's string2ull accepts: first a
// strict decimal that fits an int64 (negative refused), then whatever
// strtoull takes whole (leading spaces, a sign, leading zeros; "-" wraps).
func parseUint(s []byte) (uint64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	if v, err := strconv.ParseInt(string(s), 10, 64); err == nil && strictDecimal(s) {
		if v < 0 {
			return 0, false
		}
		return uint64(v), true
	}
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s[i:]), 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// strictDecimal reports whether s is in the form Redis's string2ll takes:
// an optional minus, then digits without a leading zero (or just "0").
func strictDecimal(s []byte) bool {
	if s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Bound is one end of an XRANGE interval after parsing "-", "+", "(id" and
// incomplete IDs.
type Bound struct {
	ID        ID
	Exclusive bool
}

// Errors from bound parsing.
var (
	// ErrExclusiveSpecial: "(" before "-" or "+".
	ErrExclusiveSpecial = errors.New("stream: exclusive special bound")
	// ErrExclusiveEdge: "(" before an ID that cannot be exceeded (0-0 as
	// start, max as end). Redis: "invalid start/end ID for the interval".
	ErrExclusiveEdge = errors.New("stream: invalid start or end ID for the interval")
)

// ParseRangeBound parses an XRANGE start (end=false) or end (end=true).
// An exclusive bound is returned already moved to the next (start) or
// previous (end) ID, with Exclusive set for callers that print it.
func ParseRangeBound(s []byte, end bool) (Bound, error) {
	if len(s) == 1 && s[0] == '-' {
		return Bound{ID: ID{}}, nil
	}
	if len(s) == 1 && s[0] == '+' {
		return Bound{ID: MaxID}, nil
	}
	missing := uint64(0)
	if end {
		missing = math.MaxUint64
	}
	if len(s) > 0 && s[0] == '(' {
		if len(s) == 2 && (s[1] == '-' || s[1] == '+') {
			return Bound{}, ErrInvalidID
		}
		id, err := ParseID(s[1:], missing)
		if err != nil {
			return Bound{}, err
		}
		var ok bool
		if end {
			id, ok = id.Prev()
		} else {
			id, ok = id.Next()
		}
		if !ok {
			return Bound{}, ErrExclusiveEdge
		}
		return Bound{ID: id, Exclusive: true}, nil
	}
	id, err := ParseID(s, missing)
	return Bound{ID: id}, err
}
