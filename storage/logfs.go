package storage

import (
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// logFS is the store's file system as Pebble sees it: the real one, with
// the write-ahead log's files wrapped (rawLogFile) so that their
// writes and syncs skip Go's system call bookkeeping while the store
// syncs every write (appendfsync always).
type logFS struct {
	vfs.FS
	db *DB // its SyncMode and slotWanted, and where raw syncs are counted
}

// isLogFile reports whether name is one of Pebble's write-ahead logs
// (NNNNNN.log).
func isLogFile(name string) bool { return strings.HasSuffix(name, ".log") }

func (fs logFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil || !isLogFile(name) {
		return f, err
	}
	return rawLogFile(f, fs.db), nil
}

// ReuseForWrite is how Pebble recycles an old log file for a new log.
func (fs logFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	if err != nil || !isLogFile(newname) {
		return f, err
	}
	return rawLogFile(f, fs.db), nil
}

func (fs logFS) Unwrap() vfs.FS { return fs.FS }
