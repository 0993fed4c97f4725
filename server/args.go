package server

import "math"

// Argument helpers every handler and the CONFIG code share, so that one
// rule holds everywhere: keywords and names compare as Redis's strcasecmp
// does (ASCII only), integers parse as Redis's string2ll does.

// argIs reports whether arg is the keyword kw (given in lower case),
// compared ASCII-case-insensitively as Redis's strcasecmp does; Unicode
// folding (bytes.EqualFold, strings.ToLower) would accept spellings Redis
// refuses ("\u212aEYS" for KEYS).
func argIs(arg []byte, kw string) bool {
	if len(arg) != len(kw) {
		return false
	}
	for i := 0; i < len(arg); i++ {
		if lowerByte(arg[i]) != kw[i] {
			return false
		}
	}
	return true
}

// nameIs is argIs for a name held as a string (CONFIG directives and
// their values, COMMAND's filters).
func nameIs(s, kw string) bool {
	if len(s) != len(kw) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lowerByte(s[i]) != lowerByte(kw[i]) {
			return false
		}
	}
	return true
}

// lowerByte folds one ASCII letter to lower case.
func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// lower returns b in lower case (ASCII only, as Redis folds command names)
// as a string.
func lower(b []byte) string {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			out := []byte(string(b))
			for j := i; j < len(out); j++ {
				out[j] = lowerByte(out[j])
			}
			return string(out)
		}
	}
	return string(b)
}

// parseRedisInt accepts exactly what Redis's string2ll accepts: an
// optional '-', then decimal digits without a leading zero ("0" alone is
// fine, "-0", "+1", " 1" and "01" are not), within int64.
func parseRedisInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	neg := b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	if len(digits) == 0 || digits[0] < '1' || digits[0] > '9' {
		// "0" is the only number that starts with a zero.
		if len(b) == 1 && b[0] == '0' {
			return 0, true
		}
		return 0, false
	}
	var v uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// parseTimeoutMs parses a timeout in milliseconds as Redis's
// getTimeoutFromObjectOrReply does (BLOCK, WAIT): errText is the reply for
// a bad one, "" when it is good.
func parseTimeoutMs(arg []byte) (ms int64, errText string) {
	ms, ok := parseRedisInt(arg)
	switch {
	case !ok:
		return 0, errTimeoutNotInteger
	case ms < 0:
		return 0, errTimeoutNegative
	}
	return ms, ""
}
