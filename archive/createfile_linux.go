//go:build linux

package archive

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// createBeneath creates the new file name (a relative, slash-separated path) under the
// directory dir for writing, with one openat2(2) call that refuses to resolve outside dir
// or through a symbolic link (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): the guarantee
// os.Root gives, without os.Root's walk of one openat per path component, which on a
// production's custodian/FOLDER/file paths tripled the cost of creating each file. It
// returns an error wrapping errors.ErrUnsupported when openat2 cannot be used (a kernel
// before Linux 5.6, or a sandbox that filters the call out).
func createBeneath(dir *os.File, name string, perm os.FileMode) (*os.File, error) {
	how := unix.OpenHow{
		Flags:   unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_CLOEXEC,
		Mode:    uint64(perm.Perm()),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS,
	}
	for {
		fd, err := unix.Openat2(int(dir.Fd()), name, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), name), nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			// ENOSYS: no openat2 in this kernel. EPERM: a seccomp filter (older container
			// runtimes) refuses it; a real permission problem shows again through os.Root.
			return nil, &os.PathError{Op: "openat2", Path: name, Err: errors.ErrUnsupported}
		default:
			return nil, &os.PathError{Op: "openat2", Path: name, Err: err}
		}
	}
}
