package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// The journal is the store's write-ahead log. Pebble runs without one of
// its own (DisableWAL): every batch goes through DB.apply, which gives it
// the next journal index, applies it to Pebble's memtable and appends it
// to the journal's buffer; a sync writes the buffer out and fdatasyncs it
// on the goroutine that asked.
//
// Why not Pebble's WAL: its log has a goroutine of its own, and a synced
// write hands the sync to it and waits for its answer. With appendfsync
// always, unpipelined, that is the event loop's whole wait: per sync
// the loop's thread woke the idle scheduler slot's thread twice (once
// readying the log writer, once readied back), the woken thread found
// nothing to do, and each wake took a CPU from the benchmark's client or
// the loop, a large part of the loop's wait per sync.
// Syncing on the loop's own goroutine took unpipelined XADD with always
// from below Redis's rate to above it (bench/results/HISTORY.md, "Tried
// on 2026-12-03 after 00:00"). With everysec and no, a writer goroutine
// writes the buffer whenever journalWriteAhead bytes are in it, and the
// everysec loop writes the rest within the second (and with everysec
// syncs): a killed process loses at most that, as with Pebble's log.
//
// Recovery. Each batch carries its own index, in the store record
// "journal" (keys.go), set last in the batch so that it is the batch's
// newest write. Pebble's flushed state therefore says exactly which
// batch it holds last: at Open, the batches after it are replayed from
// the journal, in order, and flushed, and the journal starts afresh.
// Exactness matters: replaying a batch Pebble already holds would apply
// a SingleDelete twice (stream/group_store.go), which Pebble does not
// allow.
//
// Segments. The journal is a sequence of files in the store's "journal"
// directory, NNNNNN.journal, each at most about journalSegmentSize. A
// segment is ended by an end frame, synced, before the next is started.
// It is deleted once Pebble reports a flush holding its last batch
// (FlushEnd: the tables' largest sequence number), or kept as the spare
// that the next segment overwrites; Close deletes them all after its
// flush. Segments are written over existing bytes where they can: a
// spare is a released segment, or a file of zeros the writer goroutine
// prepares once a fresh segment has taken journalPrepareAt bytes
// (prepareSpare says why).
//
// Frame layout, one per batch, little-endian:
//
//	| crc:u32 | len:u32 | index:u64 | repr (len bytes) |
//
// crc is CRC-32C of index and repr. An end frame has len 0 and the index
// of the segment's last batch. Indexes run on from segment to segment.
// Replay stops reading a segment at its end frame, or at a frame that is
// short, fails its checksum or carries a smaller index than the one
// before it (what the file held before: zeros, a recycled segment's old
// batches; or the tail a crash left unsynced); only the last segment may
// stop without its end frame. A larger index than the next is damage.
type journal struct {
	fs     vfs.FS
	dir    string
	db     *DB  // for rawLogFile: the sync mode, slotWanted, rawLogSyncs
	raw    bool // files on the real file system: rawLogFile wraps them
	marker []byte
	// segmentSize is journalSegmentSize unless a test sets it.
	segmentSize int64

	// applyMu is held through DB.apply, so that the journal's order is
	// the order batches were applied in.
	applyMu sync.Mutex
	next    uint64 // guarded by applyMu: the next batch's index

	bufMu     sync.Mutex
	buf       []byte // guarded by bufMu: frames not yet written
	bufMaxSeq uint64 // guarded by bufMu: the largest sequence number in them
	bufLast   uint64 // guarded by bufMu: the index of the last of them

	// fileMu is held through a write (and its sync): writes and
	// rotations are one at a time.
	fileMu sync.Mutex
	out    []byte   // guarded by fileMu: the buffer being written
	seg    *segment // guarded by fileMu: the segment written to
	err    error    // guarded by fileMu: a failed write or sync, sticky
	// broken is set with err: apply refuses batches from then on, since
	// the journal could not be trusted to hold them.
	broken atomic.Bool

	segMu   sync.Mutex
	closed  []segment  // guarded by segMu: full segments, oldest first
	flushed uint64     // guarded by segMu: the largest sequence number flushed
	spare   spareState // guarded by segMu: the file the next segment reuses
	// spareSize is the spare's size, guarded by segMu.
	spareSize int64

	size atomic.Int64 // bytes in all segments and the spare, for DiskUsage
	// spares counts the spares made, prepared or recycled, for tests.
	prepared, recycled atomic.Int64

	kick    chan struct{} // asks the writer goroutine to write
	release chan struct{} // asks it to delete flushed segments
	prepare chan struct{} // asks it to make a spare
}

// spareState says whether a spare file waits for the next segment.
type spareState int

const (
	spareNone      spareState = iota
	sparePreparing            // the writer goroutine is filling one
	spareReady
	spareFailed // preparing one failed: segments grow as they are written
)

// segment is one journal file.
type segment struct {
	num      uint64
	f        vfs.File // nil once closed
	size     int64    // bytes of frames written
	fileSize int64    // bytes the file holds: more than size if it was a spare
	maxSeq   uint64   // the largest sequence number of a batch in it
	last     uint64   // the index of its last batch (0: none yet)
	dirty    bool     // written since its last sync
	fresh    bool     // a new file, growing as it is written
}

const (
	journalDirName = "journal"
	journalSuffix  = ".journal"
	// journalSegmentSize is where a segment is closed and the next
	// begun. About two memtables' worth: segments are released a flush
	// or two after they fill, and a rotation (a file and a directory
	// sync) is rare.
	journalSegmentSize = 16 << 20
	frameHeaderLen     = 16
	// journalPrepareAt is how much of a fresh segment is written before
	// a spare is prepared (prepareSpare): 1 MB, so that a store that
	// writes little (a test's) never writes a spare's 18 MB of zeros.
	journalPrepareAt = 1 << 20
	// journalWriteAhead is how many bytes apply buffers, with everysec
	// and no, before the writer goroutine writes them; the everysec
	// loop writes the rest within the second. Pebble's log did the
	// same with its 32 KB blocks. Woken for every batch instead, the
	// writer cost XADD -P 16 with everysec much CPU per XADD and much of
	// its throughput (bench/results/HISTORY.md, "Built on 2026-12-03
	// after 04:27: the journal").
	journalWriteAhead = 32 << 10
	// maxOutBuf bounds the write buffer kept between writes.
	maxOutBuf = 4 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrJournalFailed is returned, wrapping the cause, by every write and
// sync once a write or sync of the journal has failed (journal.fail).
var ErrJournalFailed = errors.New("storage: journal failed")

// ErrJournalCorrupt is returned by Open when the journal misses batches
// the store does not hold, or a segment other than the last is damaged.
var ErrJournalCorrupt = errors.New("storage: journal corrupt")

func newJournal(fs vfs.FS, storeDir string, raw bool, segmentSize int64, db *DB) *journal {
	if segmentSize <= 0 {
		segmentSize = journalSegmentSize
	}
	return &journal{
		fs:          fs,
		dir:         fs.PathJoin(storeDir, journalDirName),
		db:          db,
		raw:         raw,
		marker:      storeKey(recordJournal),
		segmentSize: segmentSize,
		kick:        make(chan struct{}, 1),
		release:     make(chan struct{}, 1),
		prepare:     make(chan struct{}, 1),
	}
}

// buffer adds batch index's frame to the buffer, and returns the bytes
// buffered. The caller holds applyMu.
func (j *journal) buffer(index, maxSeq uint64, repr []byte) int {
	j.bufMu.Lock()
	j.buf = appendFrame(j.buf, index, repr)
	j.bufMaxSeq = max(j.bufMaxSeq, maxSeq)
	j.bufLast = index
	n := len(j.buf)
	j.bufMu.Unlock()
	return n
}

// appendFrame appends the frame of batch index, repr, to dst; with no
// repr it is an end frame.
func appendFrame(dst []byte, index uint64, repr []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, frameHeaderLen+len(repr))[:n+frameHeaderLen]
	binary.LittleEndian.PutUint32(dst[n+4:], uint32(len(repr)))
	binary.LittleEndian.PutUint64(dst[n+8:], index)
	dst = append(dst, repr...)
	binary.LittleEndian.PutUint32(dst[n:], crc32.Checksum(dst[n+8:], crcTable))
	return dst
}

// write writes the buffered frames to the segment, and syncs it if sync
// is set. Everything appended before the call is written (and synced)
// when it returns nil.
func (j *journal) write(sync bool) error {
	j.fileMu.Lock()
	defer j.fileMu.Unlock()
	if j.err != nil {
		return j.err
	}
	j.bufMu.Lock()
	j.buf, j.out = j.out[:0], j.buf
	maxSeq, last := j.bufMaxSeq, j.bufLast
	j.bufMu.Unlock()
	s := j.seg
	if len(j.out) > 0 {
		if _, err := s.f.Write(j.out); err != nil {
			return j.fail(fmt.Errorf("write: %w", err))
		}
		s.size += int64(len(j.out))
		if s.size > s.fileSize {
			j.size.Add(s.size - s.fileSize)
			s.fileSize = s.size
		}
		s.maxSeq = max(s.maxSeq, maxSeq)
		s.last = last
		s.dirty = true
	}
	if cap(j.out) > maxOutBuf {
		j.out = nil
	}
	if sync && s.dirty {
		if err := s.f.SyncData(); err != nil {
			return j.fail(fmt.Errorf("sync: %w", err))
		}
		s.dirty = false
	}
	if !s.fresh && s.size < j.segmentSize {
		return nil
	}
	j.segMu.Lock()
	spare := j.spare
	prepare := spare == spareNone && s.fresh && s.size >= j.prepareAt()
	if prepare {
		j.spare = sparePreparing
	}
	j.segMu.Unlock()
	if s.size >= j.segmentSize || s.fresh && spare == spareReady {
		if err := j.rotateLocked(); err != nil {
			return j.fail(err)
		}
	} else if prepare {
		select {
		case j.prepare <- struct{}{}:
		default:
		}
	}
	return nil
}

// prepareAt is how much of a fresh segment is written before a spare is
// prepared for what follows: a store that writes less never makes one.
func (j *journal) prepareAt() int64 { return min(journalPrepareAt, j.segmentSize/4) }

func (j *journal) spareIs(st spareState) bool {
	j.segMu.Lock()
	defer j.segMu.Unlock()
	return j.spare == st
}

// fail makes err the journal's for good. The caller holds fileMu. After
// a failed write or fdatasync the file's tail is unknown (and Linux may
// have dropped the pages that failed), so no later sync can be believed:
// as Redis with appendfsync always stops on such an error, the store
// stops taking writes until it is restarted, and recovers then from
// what the journal holds.
func (j *journal) fail(err error) error {
	j.err = fmt.Errorf("%w: %w", ErrJournalFailed, err)
	j.broken.Store(true)
	return j.err
}

// failed returns the journal's sticky error, if any.
func (j *journal) failed() error {
	if !j.broken.Load() {
		return nil
	}
	j.fileMu.Lock()
	defer j.fileMu.Unlock()
	return j.err
}

// rotateLocked ends the segment (an end frame, synced) and starts the
// next, in the spare if one is ready. The caller holds fileMu.
func (j *journal) rotateLocked() error {
	s := j.seg
	if _, err := s.f.Write(appendFrame(nil, s.last, nil)); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := s.f.SyncData(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	s.size += frameHeaderLen
	s.dirty = false
	next, err := j.nextSegment(s.num + 1)
	if err != nil {
		return err
	}
	next.last = s.last
	if err := s.f.Close(); err != nil {
		next.f.Close()
		return fmt.Errorf("close: %w", err)
	}
	s.f = nil
	j.seg = next
	j.segMu.Lock()
	j.closed = append(j.closed, *s)
	j.segMu.Unlock()
	j.releaseFlushed()
	return nil
}

// nextSegment opens segment num: the spare renamed, if one is ready, else
// a new file.
func (j *journal) nextSegment(num uint64) (*segment, error) {
	j.segMu.Lock()
	ready, size := j.spare == spareReady, j.spareSize
	if ready {
		j.spare = spareNone
	}
	j.segMu.Unlock()
	if !ready {
		return j.create(num)
	}
	// The directory is synced before a byte is written under the new
	// name: a crash that undid the rename would leave new batches under
	// an old number.
	s, err := j.open(j.fs.ReuseForWrite(j.sparePath(), j.path(num), vfs.WriteCategoryUnspecified))
	if err != nil {
		return nil, err
	}
	s.num, s.fileSize = num, size
	return s, nil
}

// create creates segment num, a fresh file, and syncs the directory so
// that a crash keeps its name.
func (j *journal) create(num uint64) (*segment, error) {
	s, err := j.open(j.fs.Create(j.path(num), vfs.WriteCategoryUnspecified))
	if err != nil {
		return nil, err
	}
	s.num, s.fresh = num, true
	return s, nil
}

// open makes a segment of a file just created or renamed, once the
// directory holding its name is synced.
func (j *journal) open(f vfs.File, err error) (*segment, error) {
	if err != nil {
		return nil, fmt.Errorf("storage: journal: %w", err)
	}
	if err := j.syncDir(); err != nil {
		f.Close()
		return nil, err
	}
	if j.raw {
		f = rawLogFile(f, j.db)
	}
	return &segment{f: f}, nil
}

// prepareSpare fills a spare file with zeros and syncs it, for the next
// segment to overwrite. An fdatasync after appending to a file must also
// write the file's new size (and its new blocks); writing over a file's
// existing bytes instead raised XADD -P 16 with always, with less CPU
// (on ext4 without a journal of its own; bench/results/HISTORY.md,
// "Figures that stood in code comments").
// Pebble got the same from recycling its logs.
func (j *journal) prepareSpare() {
	size := j.segmentSize + j.segmentSize/8
	err := func() error {
		f, err := j.fs.Create(j.sparePath(), vfs.WriteCategoryUnspecified)
		if err != nil {
			return err
		}
		zeros := make([]byte, min(size, 1<<20))
		for n := int64(0); n < size; n += int64(len(zeros)) {
			if _, err := f.Write(zeros); err != nil {
				f.Close()
				return err
			}
		}
		if err := f.SyncData(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}()
	j.segMu.Lock()
	defer j.segMu.Unlock()
	if err != nil {
		j.db.logger.Warn("journal: preparing a spare segment failed; segments grow as they are written", "err", err)
		j.spare = spareFailed
		return
	}
	j.spare, j.spareSize = spareReady, size
	j.size.Add(size)
	j.prepared.Add(1)
}

func (j *journal) sparePath() string { return j.fs.PathJoin(j.dir, "spare") }

func (j *journal) syncDir() error { return syncDir(j.fs, j.dir) }

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("storage: journal: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("storage: journal directory sync: %w", err)
	}
	return nil
}

func (j *journal) path(num uint64) string {
	return j.fs.PathJoin(j.dir, fmt.Sprintf("%06d%s", num, journalSuffix))
}

// noteFlushed records a flush of every batch up to sequence number seq
// (Pebble's FlushEnd, which runs holding Pebble's mutex: the segments
// are deleted by the writer goroutine).
func (j *journal) noteFlushed(info pebble.FlushInfo) {
	if info.Err != nil || info.Ingest {
		return
	}
	var seq uint64
	for _, t := range info.Output {
		seq = max(seq, uint64(t.LargestSeqNum))
	}
	j.segMu.Lock()
	j.flushed = max(j.flushed, seq)
	j.segMu.Unlock()
	select {
	case j.release <- struct{}{}:
	default:
	}
}

// releaseFlushed deletes the full segments whose batches are all flushed,
// keeping one as the spare if none is ready. A deletion that a crash
// undoes costs nothing: replay skips what the store holds.
func (j *journal) releaseFlushed() {
	j.segMu.Lock()
	n := 0
	for n < len(j.closed) && j.closed[n].maxSeq <= j.flushed {
		n++
	}
	gone := slices.Clone(j.closed[:n])
	j.closed = slices.Delete(j.closed, 0, n)
	j.segMu.Unlock()
	for _, s := range gone {
		j.segMu.Lock()
		recycle := j.spare == spareNone && s.fileSize >= j.segmentSize
		if recycle {
			j.spare = sparePreparing // no other takes the name meanwhile
		}
		j.segMu.Unlock()
		if recycle {
			err := j.fs.Rename(j.path(s.num), j.sparePath())
			j.segMu.Lock()
			if err == nil {
				j.spare, j.spareSize = spareReady, s.fileSize
				j.recycled.Add(1)
			} else {
				j.spare = spareNone
			}
			j.segMu.Unlock()
			if err == nil {
				continue
			}
		}
		if err := j.fs.Remove(j.path(s.num)); err != nil {
			j.db.logger.Warn("journal: removing a flushed segment", "segment", s.num, "err", err)
			continue
		}
		j.size.Add(-s.fileSize)
	}
}

// run writes what apply buffers, when the sync mode leaves writes to it,
// deletes flushed segments and prepares spares, until done.
func (j *journal) run(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-j.kick:
			if err := j.write(false); err != nil {
				j.db.logger.Error("journal write failed", "err", err)
			}
		case <-j.release:
			j.releaseFlushed()
		case <-j.prepare:
			j.prepareSpare()
		}
	}
}

// segmentNums lists the journal's segments, oldest first.
func (j *journal) segmentNums() ([]uint64, error) {
	names, err := j.fs.List(j.dir)
	if err != nil {
		return nil, fmt.Errorf("storage: journal: %w", err)
	}
	var nums []uint64
	for _, name := range names {
		base, ok := strings.CutSuffix(name, journalSuffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(base, 10, 64)
		if err != nil {
			continue
		}
		nums = append(nums, n)
	}
	slices.Sort(nums)
	return nums, nil
}

// recover replays onto pdb, in order, every journal batch after the last
// one pdb holds, flushes them, deletes the old segments and starts a new
// one. It runs before the store serves anything.
func (j *journal) recover(pdb *pebble.DB) (replayed int, err error) {
	if err := j.fs.MkdirAll(j.dir, 0o755); err != nil {
		return 0, fmt.Errorf("storage: journal: %w", err)
	}
	// The directory's own name must survive a crash too.
	if err := syncDir(j.fs, j.fs.PathDir(j.dir)); err != nil {
		return 0, err
	}
	last, err := j.lastApplied(pdb)
	if err != nil {
		return 0, err
	}
	nums, err := j.segmentNums()
	if err != nil {
		return 0, err
	}
	// prev is the index of the last frame read: each segment goes on
	// from it. A frame that does not is what a segment's file held
	// before (a spare's zeros, a recycled segment's old batches, with
	// smaller indexes) or damage (larger ones).
	var prev uint64
	for i, num := range nums {
		data, err := j.read(num)
		if err != nil {
			return replayed, err
		}
		ended := false
		for {
			index, repr, rest, end, ok := parseFrame(data)
			if ok && prev != 0 && index > prev+1 || ok && end && prev != 0 && index != prev {
				return replayed, fmt.Errorf("%w: segment %d holds batch %d after %d", ErrJournalCorrupt, num, index, prev)
			}
			if !ok || prev != 0 && index <= prev && !end {
				break // the rest of the file is old, or unsynced
			}
			if end {
				ended = true
				break
			}
			data, prev = rest, index
			if index <= last {
				continue // the store holds it
			}
			if index > last+1 {
				return replayed, fmt.Errorf("%w: segment %d holds batch %d, the store only %d", ErrJournalCorrupt, num, index, last)
			}
			if err := j.replayBatch(pdb, index, repr); err != nil {
				return replayed, err
			}
			last = index
			replayed++
		}
		if !ended && i < len(nums)-1 {
			return replayed, fmt.Errorf("%w: segment %d ends without its end frame, after batch %d", ErrJournalCorrupt, num, prev)
		}
	}
	if replayed > 0 {
		if err := pdb.Flush(); err != nil {
			return replayed, err
		}
	}
	if err := j.removeAll(nums); err != nil {
		return replayed, err
	}
	first := uint64(1)
	if len(nums) > 0 {
		first = nums[len(nums)-1] + 1
	}
	if j.seg, err = j.create(first); err != nil {
		return replayed, err
	}
	// Were it ended before a batch is written to it, its end frame
	// names the last batch there is.
	j.seg.last = last
	j.next = last + 1
	j.size.Store(0)
	return replayed, nil
}

// lastApplied is the index of the last batch pdb holds (0 if none).
func (j *journal) lastApplied(pdb *pebble.DB) (uint64, error) {
	v, closer, err := pdb.Get(j.marker)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: journal record of %d bytes", ErrJournalCorrupt, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

func (j *journal) read(num uint64) ([]byte, error) {
	f, err := j.fs.Open(j.path(num))
	if err != nil {
		return nil, fmt.Errorf("storage: journal: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("storage: journal: %w", err)
	}
	return data, nil
}

// parseFrame splits the first frame off data; ok is false if it is
// short or fails its checksum. An end frame (end) has no repr: index is
// the segment's last batch.
func parseFrame(data []byte) (index uint64, repr, rest []byte, end, ok bool) {
	if len(data) < frameHeaderLen {
		return 0, nil, nil, false, false
	}
	n := int(binary.LittleEndian.Uint32(data[4:]))
	if n != 0 && n < batchrepr.HeaderLen || n > len(data)-frameHeaderLen {
		return 0, nil, nil, false, false
	}
	stop := frameHeaderLen + n
	if crc32.Checksum(data[8:stop], crcTable) != binary.LittleEndian.Uint32(data) {
		return 0, nil, nil, false, false
	}
	return binary.LittleEndian.Uint64(data[8:]), data[frameHeaderLen:stop], data[stop:], n == 0, true
}

// replayBatch applies a journal batch to pdb with its index, as apply
// did the first time.
func (j *journal) replayBatch(pdb *pebble.DB, index uint64, repr []byte) error {
	b := pdb.NewBatch()
	defer b.Close()
	if err := b.SetRepr(slices.Clone(repr)); err != nil {
		return fmt.Errorf("%w: batch %d: %v", ErrJournalCorrupt, index, err)
	}
	if err := j.setMarker(b, index); err != nil {
		return err
	}
	return pdb.Apply(b, pebble.NoSync)
}

// setMarker writes index as the last applied batch's, in b.
func (j *journal) setMarker(b *pebble.Batch, index uint64) error {
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], index)
	return b.Set(j.marker, v[:], nil)
}

// close writes and syncs what is buffered and closes the segment. If
// drop is set (Pebble has flushed everything), the segments are deleted.
func (j *journal) close(drop bool) error {
	err := j.write(true)
	j.fileMu.Lock()
	defer j.fileMu.Unlock()
	if j.seg != nil && j.seg.f != nil {
		if cerr := j.seg.f.Close(); err == nil {
			err = cerr
		}
		j.seg.f = nil
	}
	if err != nil || !drop {
		return err
	}
	nums, err := j.segmentNums()
	if err != nil {
		return err
	}
	return j.removeAll(nums)
}

// removeAll deletes segments nums and the spare, if there is one: all
// the journal's files, once Pebble holds every batch in them.
func (j *journal) removeAll(nums []uint64) error {
	for _, num := range nums {
		if err := j.fs.Remove(j.path(num)); err != nil {
			return fmt.Errorf("storage: journal: %w", err)
		}
	}
	if err := j.fs.Remove(j.sparePath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("storage: journal: %w", err)
	}
	return nil
}
