package main

import (
	"fmt"
	"syscall"
	"time"
)

// cpuTime is the user and system CPU time a process used.
type cpuTime struct {
	user, sys time.Duration
}

// processCPU returns this process's CPU time so far (zero where getrusage fails).
func processCPU() cpuTime {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuTime{}
	}
	return cpuTime{user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano())}
}

func (c cpuTime) sub(o cpuTime) cpuTime { return cpuTime{user: c.user - o.user, sys: c.sys - o.sys} }

func (c cpuTime) String() string {
	return fmt.Sprintf("%.1fs+%.1fs", c.user.Seconds(), c.sys.Seconds())
}
