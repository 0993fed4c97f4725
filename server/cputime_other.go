//go:build !unix

package server

// cpuSeconds reports no CPU time where getrusage does not exist.
func cpuSeconds() (sys, user float64) { return 0, 0 }
