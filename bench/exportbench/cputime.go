package main

import (
	"syscall"
	"time"
)

// processCPU returns this process's user and system CPU time so far (zero where getrusage
// fails). SQLite (modernc, no cgo) runs in the process, so its work is included.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perEmail is CPU time per email in milliseconds.
func perEmail(cpu time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return cpu.Seconds() * 1000 / float64(n)
}
