package storage

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// recordFilter is the tables' Bloom filter policy: a filter over the
// point records of each table (pointRecord: metadata, nodes, groups,
// consumers, field sets), so that a Get of such a record skips the tables
// that cannot hold it, and a Get of a key that does not exist (XADD
// creating a stream) reads no data block at all. Entries and PEL records
// are not added, so a Get of one passes every filter (MayContain is true
// for any key not a point record) and the filters take no space per
// entry, where a full filter over every key would spend space on keys
// no Get asks for (bench/results/HISTORY.md, "Pebble settings").
//
// The name is on disk, in every table written with the policy; a table
// written under another name (or none, before this policy) is read
// without its filter. A change to pointRecord must change the name.
type recordFilter struct {
	bits bloom.FilterPolicy
}

const recordFilterName = "eddy.point-records.bloom.v1"

// newRecordFilter returns the policy with bitsPerKey bits per record.
func newRecordFilter(bitsPerKey int) pebble.FilterPolicy {
	return recordFilter{bits: bloom.FilterPolicy(bitsPerKey)}
}

func (recordFilter) Name() string { return recordFilterName }

func (p recordFilter) MayContain(ftype pebble.FilterType, filter, key []byte) bool {
	if !pointRecord(key) {
		return true
	}
	return p.bits.MayContain(ftype, filter, key)
}

func (p recordFilter) NewWriter(ftype pebble.FilterType) pebble.FilterWriter {
	return recordFilterWriter{p.bits.NewWriter(ftype)}
}

// recordFilterWriter adds only point records to the filter.
type recordFilterWriter struct {
	pebble.FilterWriter
}

func (w recordFilterWriter) AddKey(key []byte) {
	if pointRecord(key) {
		w.FilterWriter.AddKey(key)
	}
}
