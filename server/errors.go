package server

import (
	"bytes"
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

	// Stream commands (XADD, XTRIM, XRANGE, XREAD, XSETID).
	errTrimBoth             = "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
	errLimitNegative        = "ERR The LIMIT argument must be >= 0."
	errLimitNoStrategy      = "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
	errXTrimNoStrategy      = "ERR syntax error, XTRIM must be called with a trimming strategy"
	errInvalidStartID       = "ERR invalid start ID for the interval"
	errInvalidEndID         = "ERR invalid end ID for the interval"
	errTimeoutNotInteger    = "ERR timeout is not an integer or out of range"
	errTimeoutNegative      = "ERR timeout is negative"
	errXReadGroupOption     = "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
	errXReadNoAck           = "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
	errXReadGroupID         = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."
	errEntriesAddedNegative = "ERR entries_added must be positive"

	// Consumer groups (XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM).
	errXGroupNoKey       = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
	errBusyGroup         = "BUSYGROUP Consumer Group name already exists"
	errEntriesReadRange  = "ERR value for ENTRIESREAD must be positive or -1"
	errXReadGroupMissing = "ERR Missing GROUP option for XREADGROUP"
	errXReadGroupDollar  = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."
	errBlockedGroupGone  = "NOGROUP the consumer group this client was blocked on no longer exists"
	errBlockedKeyGone    = "UNBLOCKED the stream key no longer exists"
	errXClaimMinIdle     = "ERR Invalid min-idle-time argument for XCLAIM"
	errXClaimIdle        = "ERR Invalid IDLE option argument for XCLAIM"
	errXClaimTime        = "ERR Invalid TIME option argument for XCLAIM"
	errXClaimRetryCount  = "ERR Invalid RETRYCOUNT option argument for XCLAIM"
	errXAutoClaimMinIdle = "ERR Invalid min-idle-time argument for XAUTOCLAIM"
	errXAutoClaimCount   = "ERR COUNT must be > 0"
	errXAutoClaimMemory  = "ERR Insufficient memory, failed allocating transient memory, COUNT too high."

	// Dispatcher, connection and admin commands (server core).
	errExecAbortBecause  = "EXECABORT Transaction discarded because of: "
	errNotInMulti        = "ERR Command not allowed inside a transaction"
	errUnblocked         = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
	errUnblockReason     = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
	errClientName        = "ERR Client names cannot contain spaces, newlines or special characters."
	errNoSuchClient      = "ERR No such client"
	errClientIDPositive  = "ERR client-id should be greater than 0"
	errProtoVersion      = "ERR Protocol version is not an integer or out of range"
	errNoProto           = "NOPROTO unsupported protocol version"
	errHelloNoAuth       = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	errHelloSyntaxPrefix = "ERR Syntax error in HELLO option '"
	errDebugDisabled     = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."
	errInvalidExpire     = "ERR invalid expire time in '"
	errMaxClients        = "ERR max number of clients reached"
	errInvalidCursor     = "ERR invalid cursor"
	errNaNOrInf          = "ERR increment would produce NaN or Infinity"
	errDecrOverflow      = "ERR decrement would overflow"
	errExpireNXXX        = "ERR NX and XX, GT or LT options at the same time are not compatible"
	errExpireGTLT        = "ERR GT and LT options at the same time are not compatible"
	errNoLFU             = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	errStringTooLong     = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errUnsupportedOption = "ERR Unsupported option "
)

// errSubcommandArgs is Redis's addReplySubcommandSyntaxError: a known
// subcommand with options it does not take. sub is echoed as the client
// typed it; cmd is the container in upper case ("XINFO").
func errSubcommandArgs(sub []byte, cmd string) string {
	return "ERR unknown subcommand or wrong number of arguments for '" +
		errArg(sub, 128) + "'. Try " + cmd + " HELP."
}

// errNoGroup is Redis's text for a consumer group that does not exist.
func errNoGroup(group, key []byte) string {
	return "NOGROUP No such consumer group '" + errArg(group, -1) +
		"' for key name '" + errArg(key, -1) + "'"
}

// errNoGroupRead is XREADGROUP's text for a missing key or group.
func errNoGroupRead(key, group []byte) string {
	return "NOGROUP No such key '" + errArg(key, -1) + "' or consumer group '" +
		errArg(group, -1) + "' in XREADGROUP with GROUP option"
}

// errNoKeyOrGroup is the text of XPENDING, XCLAIM and XAUTOCLAIM for a
// missing key or group.
func errNoKeyOrGroup(key, group []byte) string {
	return "NOGROUP No such key '" + errArg(key, -1) + "' or consumer group '" +
		errArg(group, -1) + "'"
}

// errXClaimOption is XCLAIM's text for an argument it does not know.
func errXClaimOption(opt []byte) string {
	return "ERR Unrecognized XCLAIM option '" + errArg(opt, -1) + "'"
}

// errArg formats a client's argument inside an error line as Redis's
// addReplyErrorFormat does: "%s" stops at a NUL byte, max > 0 truncates to
// that many bytes ("%.128s"), and CR and LF become spaces so the line
// stays one line. Other bytes pass unchanged (binary safe).
func errArg(b []byte, max int) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if max > 0 && len(b) > max {
		b = b[:max]
	}
	out := []byte(string(b))
	for i, c := range out {
		if c == '\r' || c == '\n' {
			out[i] = ' '
		}
	}
	return string(out)
}

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
	case errors.Is(err, stream.ErrNotInteger):
		return errValueNotInteger
	case errors.Is(err, stream.ErrOverflow):
		return errOverflow
	case errors.Is(err, stream.ErrNotFloat):
		return errNotFloat
	case errors.Is(err, stream.ErrNaNOrInf):
		return errNaNOrInf
	case errors.Is(err, stream.ErrTooLarge):
		return errStringTooLong
	}
	return "ERR " + err.Error()
}
