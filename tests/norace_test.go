//go:build !race

package tests

// raceEnabled is true when the tests run under -race; the Eddy binary is
// then built with -race too, so the server's own races are caught.
const raceEnabled = false
