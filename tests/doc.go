// Package tests is Eddy's black-box suite: it builds cmd/eddy once, starts
// it on 127.0.0.1:0 with a temporary --dir, and talks to it over TCP only.
//
// Usage:
//
//	go test ./tests                      # Eddy against a real redis-server
//	go test -race ./tests                # the binary is built with -race too
//	EDDY_TEST_AGAINST_REDIS=1 go test ./tests
//	                                     # redis-server on both sides: proves the tests
//	EDDY_DIFF_SEED=42 go test ./tests -run TestDiffRandom
//	                                     # replay one random differential run
//	EDDY_DIFF_DUMP=1 go test -v ./tests -run TestDiff
//	                                     # log every command and reply of the diff tests
//
// Differential tests (diff_*_test.go) send the same commands to a real
// redis-server 7.0 and to Eddy and compare the raw replies byte for byte;
// only replies that carry wall-clock values are compared loosely, and that
// choice is made in one place (comparatorFor). End-to-end tests (e2e,
// blocking, durability) use go-redis or raw RESP against Eddy alone.
//
// Invariants: the package imports nothing from Eddy; every server it starts
// is stopped when its test ends; no test synchronises with sleeps (state the
// server does not announce, such as blocked_clients, is polled with a
// deadline).
package tests
