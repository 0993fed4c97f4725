package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/replication"
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
