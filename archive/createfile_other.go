//go:build !linux

package archive

import (
	"errors"
	"os"
)

// createBeneath needs Linux's openat2(2); elsewhere the caller uses os.Root.
func createBeneath(_ *os.File, name string, _ os.FileMode) (*os.File, error) {
	return nil, &os.PathError{Op: "openat2", Path: name, Err: errors.ErrUnsupported}
}
