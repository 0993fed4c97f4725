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
	flagNoAuth    // allowed before AUTH
	flagNoMulti   // refused inside MULTI
	flagNoKeyspace // touches no key: runs without a transaction
)

// commandSpec is one entry of the command table.
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
	// docs for COMMAND DOCS.
	summary string
	since   string
	group   string
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

	// block, set by a handler that found nothing to return, asks the
	// dispatcher to park the client until one of keys (in db) is appended
	// to, the timeout passes, or the client goes away.
	block *blockRequest
}

// blockRequest describes how a blocked command waits and resumes.
type blockRequest struct {
	keys    [][]byte
	timeout time.Duration // 0 waits forever
	// retry re-runs the read in a fresh View after a wake-up; it returns
	// true if it wrote a reply (the client is then unblocked).
	retry func(ctx *cmdContext) bool
	// onTimeout writes the reply sent when the timeout passes.
	onTimeout func(w *replyWriter)
}
