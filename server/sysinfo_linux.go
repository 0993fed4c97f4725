package server

import (
	"runtime"
	"syscall"
)

// osName is INFO's os: the kernel's name, release and machine, as Redis
// reports them from uname.
func osName() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return runtime.GOOS
	}
	str := func(a [65]int8) string {
		var b []byte
		for _, c := range a {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		return string(b)
	}
	return str(u.Sysname) + " " + str(u.Release) + " " + str(u.Machine)
}

// totalMemory is INFO's total_system_memory.
func totalMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}
