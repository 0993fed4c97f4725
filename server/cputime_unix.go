//go:build unix

package server

import "syscall"

// cpuSeconds is the system and user CPU time the process used, INFO's
// used_cpu_sys and used_cpu_user.
func cpuSeconds() (sys, user float64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6, float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
}
