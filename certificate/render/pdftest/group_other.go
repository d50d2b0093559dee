//go:build !unix

package pdftest

import "os/exec"

// killGroup leaves cmd as it is: exec.CommandContext kills chromium itself.
func killGroup(*exec.Cmd) {}
