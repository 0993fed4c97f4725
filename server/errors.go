package server

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"syscall"

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

	// Replication (REPLICAOF, WAIT, PSYNC).
	errInvalidMasterPort = "ERR Invalid master port"
	errWaitOnReplica     = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated."
	errPSyncNeedsEddy    = "ERR PSYNC: this primary serves Eddy replicas only (REPLCONF eddy-proto 3 first)" // TestErrorsNameProtoVersion
	errLoading           = "LOADING Redis is loading the dataset in memory"
	errNoMasterLink      = "NOMASTERLINK Can't SYNC while not connected with my master"

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
	errNotInMulti       = "ERR Command not allowed inside a transaction"
	errUnblocked        = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
	errUnblockedChanged = "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"
	errUnblockReason    = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
	errClientName       = "ERR Client names cannot contain spaces, newlines or special characters."
	errNoSuchClient     = "ERR No such client"
	errClientIDPositive = "ERR client-id should be greater than 0"
	errProtoVersion     = "ERR Protocol version is not an integer or out of range"
	errNoProto          = "NOPROTO unsupported protocol version"
	errHelloNoAuth      = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	errDebugDisabled    = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."
	errMaxClients       = "ERR max number of clients reached"
	errInvalidCursor    = "ERR invalid cursor"
	errNaNOrInf         = "ERR increment would produce NaN or Infinity"
	errDecrOverflow     = "ERR decrement would overflow"
	errExpireNXXX       = "ERR NX and XX, GT or LT options at the same time are not compatible"
	errExpireGTLT       = "ERR GT and LT options at the same time are not compatible"
	errNoLFU            = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust."
	errStringTooLong    = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errInvalidClientID  = "ERR Invalid client ID"
	errInvalidCommand   = "ERR Invalid command specified"
	errInvalidCommandN  = "ERR Invalid number of arguments specified for command"
	errNoKeyArguments   = "ERR The command has no key arguments"
	errNoConfigFile     = "ERR The server is running without a config file"
	errNoShutdown       = "ERR No shutdown in progress."
	errFunctionFlushOpt = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
)

// CONFIG SET (config.go). A directive's value check returns a bare reason
// (errNotInteger, or one of the formats below); SetRuntimeMany wraps it in
// errConfigSetFailed. The config file and the command line report the same
// reasons in their own words.
var (
	errConfigSetSyntax  = errors.New(errSyntax)
	errNotInteger       = errors.New("argument couldn't be parsed into an integer")
	errNotMemory        = errors.New("argument must be a memory value")
	errImmutableConfig  = errors.New("can't set immutable config")
	errDuplicateConfig  = errors.New("duplicate parameter")
	errEmptyDir         = errors.New("directory must not be empty")
	errUnbalancedQuotes = errors.New("unbalanced quotes in configuration line")
)

// Formats of CONFIG SET replies and reasons, spelled as Redis 7.0.15
// sends them (config_test.go freezes them).
const (
	errConfigSetUnknown  = "ERR Unknown option or number of arguments for CONFIG SET - '%s'"
	errConfigSetFailed   = "ERR CONFIG SET failed (possibly related to argument '%s') - %w"
	errConfigRange       = "argument must be between %d and %d inclusive"
	errConfigEnumPrefix  = "argument(s) must be one of the following: "
	errConfigTooManyBind = "too many bind addresses (at most %d)"
	errConfigBadBind     = "%q is not an IP address or host name"
)

// errUnknownCommand is Redis's reply to an unknown command: the name cut
// at 128 bytes and the arguments quoted until 128 bytes of them are shown.
func errUnknownCommand(args [][]byte) string {
	var b strings.Builder
	for i := 1; i < len(args) && b.Len() < 128; i++ {
		a := errArg(args[i], 128-b.Len()) // room left before the quote
		b.WriteString("'")
		b.WriteString(a)
		b.WriteString("' ")
	}
	return "ERR unknown command '" + errArg(args[0], 128) + "', with args beginning with: " + b.String()
}

// errUnknownSubcommand is Redis's reply to an unknown subcommand of the
// container parent.
func errUnknownSubcommand(parent string, sub []byte) string {
	return "ERR unknown subcommand '" + errArg(sub, 128) + "'. Try " + strings.ToUpper(parent) + " HELP."
}

// errExecAbortedBecause is EXEC's reply when EXEC itself is refused
// (wrong arity): the refusal's text without its "ERR ".
func errExecAbortedBecause(text string) string {
	return "EXECABORT Transaction discarded because of: " + strings.TrimPrefix(text, "ERR ")
}

// errProtocol is the line a client gets before Eddy closes a connection
// that broke the protocol.
func errProtocol(pe *protoError) string { return "ERR " + pe.Error() }

// errHelloSyntax is HELLO's text for an option it does not take.
func errHelloSyntax(opt []byte) string {
	return "ERR Syntax error in HELLO option '" + errArg(opt, -1) + "'"
}

// errInvalidExpire is the text of SET, SETEX and EXPIRE and their
// relatives for a time out of range; cmd is the command's name.
func errInvalidExpire(cmd string) string {
	return "ERR invalid expire time in '" + cmd + "' command"
}

// errUnsupportedOption is EXPIRE's text for an option it does not know.
func errUnsupportedOption(opt []byte) string { return "ERR Unsupported option " + errArg(opt, -1) }

// errUnrecognizedOption is CLIENT SETINFO's text for an attribute it
// does not know.
func errUnrecognizedOption(opt []byte) string {
	return "ERR Unrecognized option '" + errArg(opt, -1) + "'"
}

// errClientAttr is CLIENT SETINFO's text for a value with spaces or
// special characters; attr is the attribute's name.
func errClientAttr(attr string) string {
	return "ERR " + attr + " cannot contain spaces, newlines or special characters."
}

// errUnknownClientType is CLIENT LIST's and CLIENT KILL's text for a TYPE
// they do not know.
func errUnknownClientType(typ []byte) string {
	return "ERR Unknown client type '" + errArg(typ, -1) + "'"
}

// errNoSuchUser is CLIENT KILL USER's text for a user that does not exist.
func errNoSuchUser(user []byte) string { return "ERR No such user '" + errArg(user, -1) + "'" }

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

// errPromoteFailed is REPLICAOF NO ONE's text when the promotion could
// not record its new state: the failure's own text.
func errPromoteFailed(err error) string { return "ERR " + err.Error() }

// errEddyProtoVersion is REPLCONF eddy-proto's text for a replication
// protocol version this server does not speak; asked is the version as
// the replica sent it, speaks the one this server speaks.
func errEddyProtoVersion(asked []byte, speaks int) string {
	return fmt.Sprintf("ERR unsupported eddy replication protocol %s (this server speaks %d)", asked, speaks)
}

// errReplConfOption is REPLCONF's text for an option it does not know,
// echoed as the client sent it.
func errReplConfOption(opt []byte) string { return "ERR Unrecognized REPLCONF option: " + string(opt) }

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
	return "ERR wrong number of arguments for '" + lower([]byte(name)) + "' command"
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
	case errors.Is(err, stream.ErrStoreFailed):
		return errJournalFailed(err)
	case errors.Is(err, stream.ErrStoreDamaged):
		return errStoreDamaged(err)
	}
	return "ERR " + err.Error()
}

// errStoreDamaged answers a read that met damaged data in the store's
// files (Eddy's own: Redis keeps its data in memory), naming the table
// and the block: "ERR store damaged: file 000010: block 368488/399: crc32c
// checksum mismatch ...".
func errStoreDamaged(err error) string {
	detail := strings.TrimPrefix(err.Error(), stream.ErrStoreDamaged.Error()+": ")
	return "ERR store damaged: " + strings.TrimPrefix(detail, "pebble: ")
}

// errJournalFailed is Redis's refusal of writes after its AOF could not
// be written or synced, with the system error's text as strerror gives
// it (Go's is in lower case).
func errJournalFailed(err error) string {
	cause := err.Error()
	if errno, ok := errors.AsType[syscall.Errno](err); ok {
		cause = errno.Error()
		if cause != "" {
			cause = strings.ToUpper(cause[:1]) + cause[1:]
		}
	}
	return "MISCONF Errors writing to the AOF file: " + cause
}

// sanitizeError replaces CR and LF, which would break the reply line, by
// spaces, as Redis does. It works on bytes: every other byte, valid UTF-8
// or not, is sent as the client sent it.
func sanitizeError(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	b := []byte(s)
	for i, ch := range b {
		if ch == '\r' || ch == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}
