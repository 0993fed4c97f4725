//go:build race

package storage

// raceEnabled is true under -race, whose instrumentation allocates: the
// tests that count allocations skip then.
const raceEnabled = true
