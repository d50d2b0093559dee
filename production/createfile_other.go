//go:build !linux

package production

import (
	"errors"
	"os"
)

// The openat2(2) primitives need Linux; elsewhere exportdir.go uses os.Root.

func unsupported(name string) error {
	return &os.PathError{Op: "openat2", Path: name, Err: errors.ErrUnsupported}
}

func createBeneath(_ *os.File, name string, _ os.FileMode) (*os.File, error) {
	return nil, unsupported(name)
}

func openFileBeneath(_ *os.File, name string) (*os.File, error) { return nil, unsupported(name) }

func openDirBeneath(_ *os.File, name string) (*os.File, error) { return nil, unsupported(name) }

func mkdirBeneath(_ *os.File, name string, _ os.FileMode) error { return unsupported(name) }

func removeBeneath(_ *os.File, name string) error { return unsupported(name) }

func isLinkAt(_ *os.File, name string) (bool, error) { return false, unsupported(name) }
