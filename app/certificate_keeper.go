package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"

	"github.com/mailledger/mailledger/domain/erasure"
	"github.com/mailledger/mailledger/eventstore"
)

// CertificateKeeperConsumer names the consumer that keeps the certificate bundles: its
// offset's key in consumer_offsets.
const CertificateKeeperConsumer = "erasure-certificate-keeper"

// keptName is the form of a request id that names a kept bundle (request ids are
// GDPR-<year>-<uuid>): nothing else becomes a path.
var keptName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,127}$`)

// CertificateKeeper writes the verification bundle of every completed erasure to a folder
// outside the database (serve: MAILLEDGER_DATA_DIR/certificates), one file a request,
// <request id>.json, 0600. A restore of the database from a backup made before an
// erasure takes the ledger back to before it too; the kept bundles still prove the
// erasure (they verify offline with the ledger's public key) and name its scope, so
// Erasure.Reapply erases its messages again from them.
type CertificateKeeper struct {
	certs  *Certificates
	dir    string
	logger *slog.Logger
}

// NewCertificateKeeper returns a keeper writing to dir (created 0700 if missing).
func NewCertificateKeeper(certs *Certificates, dir string, logger *slog.Logger) (*CertificateKeeper, error) {
	if certs == nil || dir == "" {
		return nil, fmt.Errorf("%w: the certificate keeper needs the certificates and a folder", ErrConfig)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("certificate folder: %w", err)
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &CertificateKeeper{certs: certs, dir: dir, logger: logger}, nil
}

// Register adds the keeper's consumer to b.
func (k *CertificateKeeper) Register(b *Background) {
	b.AddHandler(CertificateKeeperConsumer, k.HandleEvent)
}

// HandleEvent keeps the bundle of the request that an erasure.execution_completed event
// completes. It is idempotent: a bundle already kept is left as it is.
func (k *CertificateKeeper) HandleEvent(ctx context.Context, rec eventstore.Record) error {
	if rec.StreamType != erasure.StreamType || rec.EventType != erasure.EventExecutionCompleted {
		return nil
	}
	var ev erasure.ExecutionCompleted
	if err := json.Unmarshal(rec.Payload, &ev); err != nil {
		return fmt.Errorf("decode %s at %d: %w", rec.EventType, rec.Position, err)
	}
	return k.Keep(ctx, ev.RequestID)
}

// Keep writes the bundle of the completed request requestID unless it is kept already:
// a temporary file, fsynced, renamed into place, then the folder fsynced.
func (k *CertificateKeeper) Keep(ctx context.Context, requestID string) error {
	path, err := keptPath(k.dir, requestID)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	b, err := k.certs.Bundle(ctx, AllTenants, requestID)
	if err != nil {
		return err
	}
	data, err := b.JSON()
	if err != nil {
		return err
	}
	if err := writeDurably(k.dir, path, data); err != nil {
		return fmt.Errorf("keep the certificate of %s: %w", requestID, err)
	}
	k.logger.Info("erasure certificate kept", "request_id", requestID, "path", path)
	return nil
}

// keptPath is the file of requestID's bundle in dir.
func keptPath(dir, requestID string) (string, error) {
	if !keptName.MatchString(requestID) {
		return "", fmt.Errorf("request id %q cannot name a file", requestID)
	}
	return filepath.Join(dir, requestID+".json"), nil
}

// writeDurably writes data to path (in dir) atomically, 0600.
func writeDurably(dir, path string, data []byte) error {
	tmp, err := os.CreateTemp(dir, ".keep-*") // 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing left to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
