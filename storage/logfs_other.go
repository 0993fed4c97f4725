//go:build !linux

package storage

import "github.com/cockroachdb/pebble/v2/vfs"

// rawLogFile leaves f as it is: raw system calls for the log are
// Linux's (logfs_linux.go).
func rawLogFile(f vfs.File, _ *DB) vfs.File { return f }
