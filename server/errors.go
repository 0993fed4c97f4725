package server

import (
	"errors"
	"strings"

	"github.com/eddy-streams/eddy/stream"
)

// Every error text Eddy sends lives here, spelled exactly as Redis 7.0
// spells it. Handlers reply with these constants or with errorText(err)
// for engine errors; no other file writes an error string.
const (
	errSyntax          = "ERR syntax error"
	errValueNotInteger = "ERR value is not an integer or out of range"
	errNotFloat        = "ERR value is not a valid float"
	errOverflow        = "ERR increment or decrement would overflow"
	errWrongType       = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNoSuchKey       = "ERR no such key"
	errDBIndex         = "ERR DB index is out of range"
	errNoAuth          = "NOAUTH Authentication required."
	errWrongPass       = "WRONGPASS invalid username-password pair or user is disabled."
	errAuthNotSet      = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errMultiNested     = "ERR MULTI calls can not be nested"
	errExecNoMulti     = "ERR EXEC without MULTI"
	errDiscardNoMulti  = "ERR DISCARD without MULTI"
	errWatchInMulti    = "ERR WATCH inside MULTI is not allowed"
	errExecAbort       = "EXECABORT Transaction discarded because of previous errors."
	errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"
	errXAddTooSmall    = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	errXAddZero        = "ERR The ID specified in XADD must be greater than 0-0"
	errXAddExhausted   = "ERR The stream has exhausted the last possible ID, unable to add more items"
	errXSetIDSmaller   = "ERR The ID specified in XSETID is smaller than the target stream top item"
	errXSetIDEntries   = "ERR The entries_added specified in XSETID is smaller than the target stream length"
	errXSetIDMaxDel    = "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
	errLimitNoApprox   = "ERR syntax error, LIMIT cannot be used without the special ~ option"
	errMaxLenNegative  = "ERR The MAXLEN argument must be >= 0."
	errXReadUnbalanced = "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
	errClusterDisabled = "ERR This instance has cluster support disabled"
	errReadOnlyReplica = "READONLY You can't write against a read only replica."
)

// errWrongArity is Redis's text for a wrong number of arguments.
func errWrongArity(name string) string {
	return "ERR wrong number of arguments for '" + strings.ToLower(name) + "' command"
}

// errorText maps an engine error to its wire text. Unknown errors are
// internal failures and are reported as such.
func errorText(err error) string {
	switch {
	case errors.Is(err, stream.ErrWrongType):
		return errWrongType
	case errors.Is(err, stream.ErrNoSuchKey):
		return errNoSuchKey
	case errors.Is(err, stream.ErrInvalidID):
		return errInvalidStreamID
	case errors.Is(err, stream.ErrIDTooSmall):
		return errXAddTooSmall
	case errors.Is(err, stream.ErrIDZero):
		return errXAddZero
	case errors.Is(err, stream.ErrExhausted):
		return errXAddExhausted
	case errors.Is(err, stream.ErrSetIDSmaller):
		return errXSetIDSmaller
	case errors.Is(err, stream.ErrEntriesAddedSmaller):
		return errXSetIDEntries
	case errors.Is(err, stream.ErrMaxDeletedGreater):
		return errXSetIDMaxDel
	}
	return "ERR " + err.Error()
}
