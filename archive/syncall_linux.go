//go:build linux

package archive

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// perFileSync: the files of a batch are not synced one by one, syncAll does it.
const perFileSync = false

// syncAll makes a batch's files durable: their data, their inodes and the renames that
// gave them their names. On Linux one syncfs(2) of the store's file system does it for the
// whole batch, in one journal commit, instead of an fsync per file and per folder (which
// cost about twice the CPU of the whole write on ext4 here). dirs are the batch's folders.
func syncAll(root string, _ map[string]bool) error {
	d, err := os.Open(root)
	if err != nil {
		return err
	}
	defer d.Close()
	err = unix.Syncfs(int(d.Fd()))
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		unix.Sync() // a sandbox without syncfs: sync every file system, which covers ours
		return nil
	}
	return err
}
