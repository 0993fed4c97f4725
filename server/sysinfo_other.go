//go:build !linux

package server

import "runtime"

// osName is INFO's os; elsewhere than on Linux, Go's names for the
// system and architecture.
func osName() string { return runtime.GOOS + " " + runtime.GOARCH }

// totalMemory is INFO's total_system_memory: 0, unknown, elsewhere than
// on Linux.
func totalMemory() int64 { return 0 }
