package stream

import "errors"

// Entry is a stream entry: its ID and field, value, field, value, ...
type Entry struct {
	ID     ID
	Fields [][]byte
}

// Errors of stream commands. The server maps each to Redis's text.
var (
	// ErrIDTooSmall: XADD with an ID <= the stream's last ID.
	ErrIDTooSmall = errors.New("stream: ID equal or smaller than the top item")
	// ErrIDZero: XADD 0-0 (or 0) on a stream whose last ID is 0-0.
	ErrIDZero = errors.New("stream: ID must be greater than 0-0")
	// ErrExhausted: XADD * on a stream whose last ID is the maximum.
	ErrExhausted = errors.New("stream: exhausted the last possible ID")
	// ErrSetIDSmaller: XSETID below the last ID.
	ErrSetIDSmaller = errors.New("stream: XSETID smaller than the top item")
	// ErrEntriesAddedSmaller: XSETID ENTRIESADDED below the length.
	ErrEntriesAddedSmaller = errors.New("stream: entries_added smaller than the length")
	// ErrMaxDeletedGreater: XSETID MAXDELETEDID greater than the new last ID.
	ErrMaxDeletedGreater = errors.New("stream: ID smaller than max_deleted_entry_id")
)

// TrimStrategy selects how a stream is trimmed.
type TrimStrategy uint8

// Trim strategies.
const (
	TrimNone TrimStrategy = iota
	TrimMaxLen
	TrimMinID
)

// Trim describes MAXLEN/MINID trimming, as given to XADD or XTRIM.
type Trim struct {
	Strategy TrimStrategy
	Approx   bool  // "~": only whole nodes are removed
	MaxLen   int64 // for TrimMaxLen
	MinID    ID    // for TrimMinID
	// Limit bounds the entries removed (approx only); LimitGiven false
	// means Redis's default of 100 * stream-node-max-entries.
	Limit      int64
	LimitGiven bool
}

// XAddArgs are the parsed arguments of XADD.
type XAddArgs struct {
	ID         ID   // explicit ID (or its ms part with SeqAuto)
	Auto       bool // "*"
	SeqAuto    bool // "ms-*"
	NoMkStream bool
	Trim       Trim
	Fields     [][]byte // field, value, ...
}

// XSetIDArgs are the parsed arguments of XSETID.
type XSetIDArgs struct {
	ID           ID
	EntriesAdded int64 // -1 when not given
	MaxDeleted   *ID   // nil when not given
}

// Info is what XINFO STREAM reports.
type Info struct {
	Length         uint64
	RadixTreeKeys  uint64
	RadixTreeNodes uint64
	LastGenerated  ID
	MaxDeleted     ID
	EntriesAdded   uint64
	RecordedFirst  ID
	Groups         uint64
	First, Last    *Entry  // nil when the stream is empty (non-FULL form)
	Entries        []Entry // FULL form only
	// GroupDetails are the consumer groups in byte order of name, with
	// their PELs and consumers (FULL form only).
	GroupDetails []GroupFull
}
