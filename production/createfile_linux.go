//go:build linux

package production

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The openat2(2) primitives below resolve a relative, slash-separated path under the
// directory dir with one call that refuses to leave dir or to pass through a symbolic
// link (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): the guarantee os.Root gives, and more
// (os.Root follows links that stay inside), without os.Root's walk of one openat per
// path component, which on a production's custodian/FOLDER/file paths tripled the cost
// of creating each file. Each returns an error wrapping errors.ErrUnsupported when
// openat2 cannot be used (a kernel before Linux 5.6, or a sandbox that filters the call
// out); exportdir.go then falls back on os.Root.

const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS

// openat2 opens name under dir with flags (O_CLOEXEC added), retrying on EINTR.
func openat2(dir *os.File, name string, flags int, perm os.FileMode) (*os.File, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(perm.Perm()), Resolve: beneath}
	for {
		fd, err := unix.Openat2(int(dir.Fd()), name, &how)
		if err == nil {
			return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name)), nil
		}
		if !errors.Is(err, unix.EINTR) {
			return nil, beneathError("openat2", dir, name, err)
		}
	}
}

// beneathError names the path and turns the kernel's refusals into ErrLinkRefused (ELOOP:
// a link on the way; EXDEV: a path that leaves dir) and ENOSYS or EPERM into
// errors.ErrUnsupported. EPERM is a seccomp filter (older container runtimes); a real
// permission problem shows again through os.Root.
func beneathError(op string, dir *os.File, name string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		err = linkRefused(filepath.Join(dir.Name(), name))
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		err = errors.ErrUnsupported
	}
	return &os.PathError{Op: op, Path: filepath.Join(dir.Name(), name), Err: err}
}

// createBeneath creates the new file name under dir for writing; an existing file (or
// link) of that name is an error, never overwritten or followed.
func createBeneath(dir *os.File, name string, perm os.FileMode) (*os.File, error) {
	return openat2(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, perm)
}

// openFileBeneath opens the regular file name under dir for reading.
func openFileBeneath(dir *os.File, name string) (*os.File, error) {
	return openat2(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
}

// openDirBeneath opens the directory name under dir.
func openDirBeneath(dir *os.File, name string) (*os.File, error) {
	return openat2(dir, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

// mkdirBeneath creates the directory name under dir (its parent must exist); an
// existing directory is not an error, an existing link is ErrLinkRefused.
func mkdirBeneath(dir *os.File, name string, perm os.FileMode) error {
	parentName, last := splitLast(name)
	parent := dir
	if parentName != "" {
		var err error
		if parent, err = openDirBeneath(dir, parentName); err != nil {
			return err
		}
		defer parent.Close()
	}
	err := unix.Mkdirat(int(parent.Fd()), last, uint32(perm.Perm()))
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return beneathError("mkdirat", parent, last, err)
	}
	if err == nil {
		return nil
	}
	d, err := openDirBeneath(parent, last) // it exists: a directory, not a link
	if err != nil {
		return err
	}
	return d.Close()
}

// removeBeneath removes name under dir and everything below it. Nothing is followed: a
// link is removed itself, and a folder is emptied through a descriptor opened without
// following links. A missing name is not an error.
func removeBeneath(dir *os.File, name string) error {
	parentName, last := splitLast(name)
	parent := dir
	if parentName != "" {
		var err error
		if parent, err = openDirBeneath(dir, parentName); err != nil {
			return err
		}
		defer parent.Close()
	}
	return removeAt(parent, last)
}

// removeAt removes the entry name of dir, emptying it first when it is a directory.
func removeAt(dir *os.File, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return beneathError("fstatat", dir, name, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		sub, err := openDirBeneath(dir, name)
		if err != nil {
			return err
		}
		names, err := sub.Readdirnames(-1)
		for _, n := range names {
			if err == nil {
				err = removeAt(sub, n)
			}
		}
		if err = errors.Join(err, sub.Close()); err != nil {
			return err
		}
		if err := unix.Unlinkat(int(dir.Fd()), name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
			return beneathError("unlinkat", dir, name, err)
		}
		return nil
	}
	if err := unix.Unlinkat(int(dir.Fd()), name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return beneathError("unlinkat", dir, name, err)
	}
	return nil
}

// isLinkAt reports whether the entry name of dir is a symbolic link.
func isLinkAt(dir *os.File, name string) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, beneathError("fstatat", dir, name, err)
	}
	return st.Mode&unix.S_IFMT == unix.S_IFLNK, nil
}
