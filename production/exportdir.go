package production

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Every file of a production is reached from a descriptor of DIR_EXPORT itself, never by
// a path the kernel resolves from the root: the tenant folder, the ediscovery folder, the
// job directory and everything in it are opened, created, read and removed beneath that
// descriptor, and a symbolic link anywhere below DIR_EXPORT is refused (ErrLinkRefused),
// or removed itself when a job is deleted, never followed. DIR_EXPORT itself may be a
// link: where it points is the operator's choice. On Linux this is one openat2(2) call
// per operation (createfile_linux.go); where openat2 is missing, os.Root, with each
// component checked for a link first.

// ErrLinkRefused means a symbolic link was found below DIR_EXPORT where a production's
// folder or file should be, or a path would leave DIR_EXPORT: nothing is read or written
// through it.
var ErrLinkRefused = errors.New("symbolic link refused in the export directory")

func linkRefused(path string) error { return fmt.Errorf("%w: %s", ErrLinkRefused, path) }

// splitLast splits a slash-separated path into its parent ("" for none) and last name.
func splitLast(name string) (string, string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

// inRoot runs fn with an os.Root of dir after checking that no component of name is a
// link: the fallback where openat2 is unsupported.
func inRoot(dir *os.File, name string, fn func(*os.Root) error) error {
	root, err := os.OpenRoot(dir.Name())
	if err != nil {
		return err
	}
	defer root.Close()
	for i := 1; i <= len(name); i++ {
		if i < len(name) && name[i] != '/' {
			continue
		}
		info, err := root.Lstat(name[:i])
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return linkRefused(dir.Name() + "/" + name[:i])
		}
	}
	return fn(root)
}

// createFile creates the new file name under dir for writing, never through a link.
func createFile(dir *os.File, name string, perm os.FileMode) (*os.File, error) {
	f, err := createBeneath(dir, name, perm)
	if errors.Is(err, errors.ErrUnsupported) {
		err = inRoot(dir, name, func(r *os.Root) (err error) {
			f, err = r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
			return err
		})
	}
	return f, err
}

// openFile opens the regular file name under dir for reading, never through a link.
func openFile(dir *os.File, name string) (*os.File, error) {
	f, err := openFileBeneath(dir, name)
	if errors.Is(err, errors.ErrUnsupported) {
		err = inRoot(dir, name, func(r *os.Root) (err error) {
			f, err = r.Open(name)
			return err
		})
	}
	return f, err
}

// openDir opens the directory name under dir, never through a link.
func openDir(dir *os.File, name string) (*os.File, error) {
	f, err := openDirBeneath(dir, name)
	if errors.Is(err, errors.ErrUnsupported) {
		err = inRoot(dir, name, func(r *os.Root) (err error) {
			f, err = r.Open(name)
			return err
		})
	}
	return f, err
}

// makeDirs creates the directory name under dir and the missing ones on its way; an
// existing link on the way is ErrLinkRefused.
func makeDirs(dir *os.File, name string, perm os.FileMode) error {
	for i := 1; i <= len(name); i++ {
		if i < len(name) && name[i] != '/' {
			continue
		}
		err := mkdirBeneath(dir, name[:i], perm)
		if errors.Is(err, errors.ErrUnsupported) {
			return inRoot(dir, name, func(r *os.Root) error { return r.MkdirAll(name, perm) })
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// removeAll removes name under dir and everything below it, following no link: a link
// is removed itself. A missing name is not an error.
func removeAll(dir *os.File, name string) error {
	err := removeBeneath(dir, name)
	if errors.Is(err, errors.ErrUnsupported) {
		parent, _ := splitLast(name)
		err = inRoot(dir, parent, func(r *os.Root) error { return r.RemoveAll(name) })
	}
	return err
}

// isLink reports whether the entry name of dir is a symbolic link.
func isLink(dir *os.File, name string) (bool, error) {
	link, err := isLinkAt(dir, name)
	if errors.Is(err, errors.ErrUnsupported) {
		var info fs.FileInfo
		err = inRoot(dir, "", func(r *os.Root) (err error) {
			info, err = r.Lstat(name)
			return err
		})
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		link = err == nil && info.Mode()&fs.ModeSymlink != 0
	}
	return link, err
}

// openExportDir opens the folder tenant/ediscovery of DIR_EXPORT (root), creating it (and
// root) when create is set. A missing folder is fs.ErrNotExist.
func openExportDir(root, tenant string, create bool) (*os.File, error) {
	if create {
		if err := os.MkdirAll(root, 0o750); err != nil {
			return nil, fmt.Errorf("create export directory: %w", err)
		}
	}
	base, err := os.Open(root)
	if err != nil {
		return nil, err
	}
	defer base.Close()
	rel := tenant + "/ediscovery"
	if create {
		if err := makeDirs(base, rel, 0o750); err != nil {
			return nil, err
		}
	}
	return openDir(base, rel)
}
