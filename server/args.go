package server

import "github.com/eddy-streams/eddy/stream"

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

// parseRedisInt accepts exactly what Redis's string2ll accepts
// (stream.ParseInt).
func parseRedisInt(b []byte) (int64, bool) { return stream.ParseInt(b) }

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
