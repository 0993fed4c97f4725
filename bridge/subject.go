package bridge

import (
	"bytes"
	"strings"

	"github.com/eddy-streams/eddy/stream"
)

// NATS subjects: tokens separated by '.'; in a filter "*" matches any one
// token and a final ">" one or more.

// subjectHasWildcard reports whether filter has a "*" or ">" token.
func subjectHasWildcard(filter string) bool {
	for tok := range strings.SplitSeq(filter, ".") {
		if tok == "*" || tok == ">" {
			return true
		}
	}
	return false
}

// subjectMatches reports whether subject matches the NATS subject filter.
func subjectMatches(filter string, subject []byte) bool {
	for {
		ftok, frest, fmore := strings.Cut(filter, ".")
		if len(subject) == 0 {
			return false
		}
		stok, srest, smore := bytes.Cut(subject, []byte{'.'})
		switch {
		case ftok == ">" && !fmore:
			return true
		case ftok == "*" || ftok == string(stok):
		default:
			return false
		}
		if !fmore || !smore {
			return fmore == smore
		}
		filter, subject = frest, srest
	}
}

// subjectFilter is a NATS subject filter as the engine's
// stream.SubjectFilter, which picks the subject index's one seek for a
// filter without wildcards.
type subjectFilter string

// Literal implements stream.SubjectFilter.
func (f subjectFilter) Literal() ([]byte, bool) {
	if subjectHasWildcard(string(f)) {
		return nil, false
	}
	return []byte(f), true
}

// Match implements stream.SubjectFilter.
func (f subjectFilter) Match(subject []byte) bool { return subjectMatches(string(f), subject) }

// engineFilter is filter for the engine: "" (every subject) is nil.
func engineFilter(filter string) stream.SubjectFilter {
	if filter == "" {
		return nil
	}
	return subjectFilter(filter)
}
