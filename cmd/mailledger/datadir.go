package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/database"
)

// Modes of the local state: it holds password hashes, the index of body words and the
// keys, so only the service's user may read it.
const (
	privateDirMode  fs.FileMode = 0o700
	privateFileMode fs.FileMode = 0o600
)

// secureDataDir tightens the local state that an earlier version (or an operator) left
// readable to others: MAILLEDGER_DATA_DIR and its keys and store folders become 0700, the
// private keys (keys/*.key) and the SQLite database's files (-wal, -shm, -journal too)
// 0600. Each change is logged at warning level with the path and both modes. Paths that
// do not exist are left alone (they are created private when first used). The folder of
// an SQLite database outside the data dir is not changed (it may be shared, like /tmp),
// and the store's subfolders are not walked: once the data dir is 0700 nobody else can
// reach them.
func secureDataDir(cfg app.Config, logger *slog.Logger) error {
	dirs := []string{cfg.DataDir, cfg.KeyDir(), cfg.StoreDir(), cfg.CertificateDir()}
	keys, err := filepath.Glob(filepath.Join(cfg.KeyDir(), "*.key"))
	if err != nil {
		return err
	}
	files := append(keys, database.SQLiteFiles(cfg.DatabaseURL)...)
	var errs []error
	for _, d := range dirs {
		errs = append(errs, tighten(d, privateDirMode, logger))
	}
	for _, f := range files {
		errs = append(errs, tighten(f, privateFileMode, logger))
	}
	return errors.Join(errs...)
}

// tighten removes from path's mode the bits that want lacks, logging the change; a missing
// path is not an error.
func tighten(path string, want fs.FileMode, logger *slog.Logger) error {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check permissions of %s: %w", path, err)
	}
	old := info.Mode().Perm()
	if old&^want == 0 {
		return nil
	}
	mode := old & want
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("restrict permissions of %s to %o: %w", path, mode, err)
	}
	logger.Warn("tightened permissions of local state", "path", path,
		"old_mode", fmt.Sprintf("%04o", old), "new_mode", fmt.Sprintf("%04o", mode))
	return nil
}
