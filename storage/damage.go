package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// A damaged block of a table (a checksum that does not match: a flipped
// bit on the disk, a torn write of a table) is an error of the reads that
// touch it, never an exit of the process: Pebble's default for its
// DataCorruption event is to call Fatalf, and the process then exited
// again at every restart as soon as that range was read. The reads that
// meet it return ErrDamaged; the rest of the store keeps being served, and
// the operator learns of it from the log and INFO (DB.Damage).

// ErrDamaged is returned, wrapping Pebble's one-line description (the
// table and the block), by a read that met damaged data in the store's
// files.
var ErrDamaged = errors.New("storage: damaged data")

// readError is err as a read of the store returns it: a corruption
// Pebble found becomes ErrDamaged, described on one line (Pebble's error
// spans several, with its hints and the key bounds of the table).
func readError(err error) error {
	if err == nil || !pebble.IsCorruptionError(err) {
		return err
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	return fmt.Errorf("%w: %s", ErrDamaged, first)
}

// DamageStats is what the store's reads met of damaged data since it was
// opened.
type DamageStats struct {
	Reads    uint64 // reads that met a damaged block
	LastFile string // the file of the last one, "" if none
}

// damage counts the damaged blocks the store's reads met, from Pebble's
// DataCorruption events.
type damage struct {
	logger *slog.Logger
	mu     sync.Mutex
	stats  DamageStats // guarded by mu
}

// note is the DataCorruption event: called in the read that met the
// damage, which then returns it.
func (d *damage) note(info pebble.DataCorruptionInfo) {
	first, _, _ := strings.Cut(fmt.Sprint(info.Details), "\n")
	d.logger.Error("store: damaged data read; the reads of its range fail until the file is restored",
		"file", info.Path, "detail", first)
	d.mu.Lock()
	d.stats.Reads++
	d.stats.LastFile = info.Path
	d.mu.Unlock()
}

// Damage reports the damaged data the store's reads met.
func (db *DB) Damage() DamageStats {
	db.damage.mu.Lock()
	defer db.damage.mu.Unlock()
	return db.damage.stats
}
