package benchenv

import (
	"fmt"
	"syscall"
	"time"
)

// CPUTime is the user and system CPU time a process used.
type CPUTime struct {
	User, Sys time.Duration
}

// ProcessCPU returns this process's CPU time so far (zero where getrusage fails).
func ProcessCPU() CPUTime {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return CPUTime{}
	}
	return CPUTime{User: time.Duration(ru.Utime.Nano()), Sys: time.Duration(ru.Stime.Nano())}
}

// Sub is the CPU time used between o and c.
func (c CPUTime) Sub(o CPUTime) CPUTime { return CPUTime{User: c.User - o.User, Sys: c.Sys - o.Sys} }

// Total is user plus system time.
func (c CPUTime) Total() time.Duration { return c.User + c.Sys }

func (c CPUTime) String() string {
	return fmt.Sprintf("%.1fs+%.1fs", c.User.Seconds(), c.Sys.Seconds())
}

// Rate is n per second of d (0 for no time).
func Rate(n float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return n / d.Seconds()
}
