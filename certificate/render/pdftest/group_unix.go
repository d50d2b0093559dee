//go:build unix

package pdftest

import (
	"os/exec"
	"syscall"
)

// killGroup runs cmd in its own process group and kills the whole group (chromium and
// its helper processes) when its context ends.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
