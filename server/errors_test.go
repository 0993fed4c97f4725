package server

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/eddy-streams/eddy/replication"
	"github.com/eddy-streams/eddy/storage"
)

// TestErrorsNameProtoVersion: the error texts are constants, so the one
// that tells a client which replication protocol to ask for spells the
// version out; it must be the version the replication package speaks.
func TestErrorsNameProtoVersion(t *testing.T) {
	want := "REPLCONF eddy-proto " + strconv.Itoa(replication.ProtoVersion) + " first"
	if !strings.Contains(errPSyncNeedsEddy, want) {
		t.Errorf("errPSyncNeedsEddy = %q, want it to say %q", errPSyncNeedsEddy, want)
	}
}

// A failed journal is refused as Redis refuses writes after a failed AOF
// write: its system error as strerror spells it, else the error's text.
func TestErrorTextJournalFailed(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: sync: %w", storage.ErrJournalFailed, syscall.EIO), "MISCONF Errors writing to the AOF file: Input/output error"},
		{fmt.Errorf("%w: write: %w", storage.ErrJournalFailed, syscall.ENOSPC), "MISCONF Errors writing to the AOF file: No space left on device"},
		{fmt.Errorf("%w: sync: injected", storage.ErrJournalFailed), "MISCONF Errors writing to the AOF file: storage: journal failed: sync: injected"},
	} {
		if got := errorText(c.err); got != c.want {
			t.Errorf("errorText(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
