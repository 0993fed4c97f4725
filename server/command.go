package server

import (
	"time"

	"github.com/eddy-streams/eddy/stream"
)

// cmdFlags are a command's properties, as COMMAND INFO reports them.
type cmdFlags uint32

// Command flags.
const (
	flagWrite    cmdFlags = 1 << iota // changes data: refused on replicas, runs in Update
	flagReadOnly                      // reads data: runs in View
	flagDenyOOM
	flagAdmin
	flagPubSub
	flagNoScript
	flagBlocking // may block (XREAD BLOCK)
	flagLoading  // allowed while loading
	flagStale    // allowed on a stale replica
	flagFast
	flagNoAuth     // allowed before AUTH
	flagNoMulti    // refused inside MULTI
	flagNoKeyspace // touches no key: runs without a transaction

	flagSkipMonitor
	flagSkipSlowlog
	flagMayReplicate
	flagNoMandatoryKeys
	flagMovableKeys
	flagAllowBusy
	flagNoAsyncLoading // refused while a replica loads asynchronously (reported only)
	flagNoQueue        // runs at once inside MULTI instead of being queued (EXEC, DISCARD, MULTI, WATCH, QUIT)
	flagAnswerFirst    // answered before arity and auth checks (QUIT, as Redis 7.0 does)
	flagExecLike       // refused at dispatch: the queued transaction is discarded with EXECABORT (EXEC)
	// flagLoadingBare: while a replica loads a full sync, which holds the
	// keyspace locked, the command runs without a transaction instead of
	// being refused (INFO, whose keyspace section is then empty).
	flagLoadingBare
)

// commandSpec is one entry of the command table: what drives dispatch
// (name, arity, flags, key positions, handler, subcommands). What COMMAND
// INFO and COMMAND DOCS report besides is the embedded commandMeta, which
// buildTable fills from command_meta.go; a table entry writes it only for
// a command Redis 7.0 lacks (CLIENT SETINFO).
type commandSpec struct {
	name     string // lower case
	arity    int    // Redis's rule: n exact, -n at least n (name counted)
	flags    cmdFlags
	firstKey int // key positions as COMMAND INFO reports them
	lastKey  int
	step     int
	handler  func(ctx *cmdContext)
	// subcommands (XINFO STREAM, CLIENT LIST, ...) are looked up by the
	// second argument; the parent's handler is unused when set.
	subcommands []*commandSpec
	parent      *commandSpec // set for subcommands when the table is built
	full        string       // "xinfo|stream": set when the table is built (fullName)
	stats       *cmdStats    // INFO commandstats: set when the table is built

	commandMeta
}

// keySpec is one key specification of COMMAND INFO (Redis 7.0 shape).
// BeginSearch is either an index (bsIndex > 0) or a keyword (bsKeyword,
// searched from bsStartFrom); FindKeys is a range (lastKey, keyStep,
// limit) unless fkKeyNum is set (keynum form: keyNumIdx, firstKey, keyStep).
type keySpec struct {
	notes       string   // Redis's explanation of unusual flags ("UPDATE instead of INSERT because ...")
	flags       []string // "RW", "RO", "OW", "RM", "access", "update", "insert", "delete"
	bsIndex     int
	bsKeyword   string
	bsStartFrom int
	lastKey     int
	keyStep     int
	limit       int
	fkKeyNum    bool
	keyNumIdx   int
	firstKey    int
}

// cmdArg is one argument of COMMAND DOCS.
type cmdArg struct {
	name    string
	typ     string // "string", "integer", "double", "key", "pattern", "unix-time", "pure-token", "oneof", "block"
	keySpec int    // key_spec_index, reported only for typ "key"
	token   string
	summary string
	since   string
	// deprecatedSince is the version that deprecated the argument.
	deprecatedSince string
	flags           []string // "optional", "multiple", "multiple_token"
	args            []cmdArg // for "oneof" and "block"
}

// cmdContext is what a handler gets: the arguments (args[0] is the
// command name), the transaction to read and write through (nil for
// flagNoKeyspace commands), and where to write the reply.
type cmdContext struct {
	c       *client
	args    [][]byte
	tx      *stream.Tx
	w       *replyWriter
	db      int  // the client's selected database
	inMulti bool // running inside EXEC: never block

	// failed is set by fail: the reply was an error and, outside EXEC,
	// the command's writes are dropped.
	failed bool

	// woken, for a blockRequest's retry, are the keys to look at, in the
	// order to serve them: the keys changed since the last look (appended
	// to, or for XREADGROUP also deleted, replaced or flushed away, so a
	// reader whose key or group is gone gets its error), in commit order,
	// as the blocking layer saw them in OnCommit.
	woken [][]byte

	// block, set by a handler that found nothing to return, asks the
	// dispatcher to park the client until one of keys (in db) changes (see
	// woken), the timeout passes, or the client goes away.
	block *blockRequest
}

// blockRequest describes how a blocked command waits and resumes.
type blockRequest struct {
	keys [][]byte
	// acks: the command waits for replicas' acknowledgements (WAIT), not
	// for keys; it is woken by each of them (ackKey).
	acks    bool
	timeout time.Duration // 0 waits forever
	// retry re-runs the read in a fresh View after a wake-up, looking at
	// ctx.woken in that order; it returns true if it wrote a reply (the
	// client is then unblocked).
	retry func(ctx *cmdContext) bool
	// onTimeout writes the reply sent when the timeout passes.
	onTimeout func(w *replyWriter)
	// share, when not empty, names the command's read (protocol,
	// database, keys, IDs, count) so that the event loop answers
	// identical blocked commands woken together with one read (XREAD).
	share string
}

// commandMeta is what Redis 7.0.15 reports about a command in COMMAND
// INFO and COMMAND DOCS besides arity, flags and key positions (which
// drive dispatch and stay in the table). command_meta.go holds it for
// every Redis command Eddy registers, or may register, generated from a
// real redis-server so that client hints and key routing match to the
// byte; buildTable copies it into the table.
type commandMeta struct {
	summary, since, group, complexity string
	docFlags                          []string
	deprecatedSince, replacedBy       string
	history                           [][2]string
	args                              []cmdArg
	acl                               []string // without '@'
	tips                              []string
	keySpecs                          []keySpec
}

// applyMeta replaces the spec's documentation with Redis's.
func (spec *commandSpec) applyMeta(m commandMeta) { spec.commandMeta = m }
