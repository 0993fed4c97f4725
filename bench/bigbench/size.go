//go:build linux

package main

import (
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// dirSize is the size of a directory tree, in total and by kind of file.
type dirSize struct {
	Bytes     int64            `json:"bytes"`     // apparent sizes (du -sb)
	Allocated int64            `json:"allocated"` // blocks on disk (du -s)
	ByKind    map[string]int64 `json:"bytes_by_kind"`
}

// kindOf groups a store's files: Pebble's tables, logs (WAL), manifests
// and options; Redis's RDB and AOF files.
func kindOf(name string) string {
	switch {
	case strings.HasSuffix(name, ".sst"):
		return "sst"
	case strings.HasSuffix(name, ".blob"):
		return "blob"
	case strings.HasSuffix(name, ".log"):
		return "wal"
	case strings.HasPrefix(name, "MANIFEST"):
		return "manifest"
	case strings.Contains(name, ".aof"):
		// Before .rdb: Redis 7's AOF base file is appendonly.aof.1.base.rdb.
		return "aof"
	case strings.HasSuffix(name, ".rdb"):
		return "rdb"
	}
	return "other"
}

func measureDir(dir string) (dirSize, error) {
	d := dirSize{ByKind: map[string]int64{}}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		d.Bytes += info.Size()
		d.ByKind[kindOf(e.Name())] += info.Size()
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			d.Allocated += st.Blocks * 512
		}
		return nil
	})
	return d, err
}
