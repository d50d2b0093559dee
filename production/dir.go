package production

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The job directory: its path, checked; removing it and checking it is there; the
// custodian folders inside it. Every folder is reached through no link (exportdir.go).

var (
	componentPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	jobIDPattern     = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// Dir returns the directory of a job, {root}/<tenant>/ediscovery/<jobID>, after
// checking that tenant is a plain name and jobID a lower-case UUID.
func Dir(root, tenant, jobID string) (string, error) {
	if !componentPattern.MatchString(tenant) || strings.Contains(tenant, "..") {
		return "", fmt.Errorf("%w: tenant %q", ErrInvalid, tenant)
	}
	if !jobIDPattern.MatchString(jobID) {
		return "", fmt.Errorf("%w: job id %q", ErrInvalid, jobID)
	}
	if root == "" {
		return "", fmt.Errorf("%w: no export directory", ErrInvalid)
	}
	return filepath.Join(root, tenant, "ediscovery", jobID), nil
}

// Remove removes a job's directory and everything in it, following no
// symbolic link: a link planted at the job directory or inside it is removed itself, and
// one at the tenant or ediscovery folder is ErrLinkRefused. A missing directory is not
// an error.
func Remove(root, tenant, jobID string) error {
	if _, err := Dir(root, tenant, jobID); err != nil {
		return err
	}
	parent, err := openExportDir(root, tenant, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove production: %w", err)
	}
	defer parent.Close()
	if err := removeAll(parent, jobID); err != nil {
		return fmt.Errorf("remove production: %w", err)
	}
	return nil
}

// Check returns nil when a job's directory is there, reached without a
// symbolic link; fs.ErrNotExist when it is missing, ErrLinkRefused for a link.
func Check(root, tenant, jobID string) error {
	dir, err := openJobDir(root, tenant, jobID)
	if err != nil {
		return err
	}
	return dir.Close()
}

// openJobDir opens an existing job directory, through no link.
func openJobDir(root, tenant, jobID string) (*os.File, error) {
	if _, err := Dir(root, tenant, jobID); err != nil {
		return nil, err
	}
	parent, err := openExportDir(root, tenant, false)
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	return openDir(parent, jobID)
}

// createJobDir makes the job directory jobID of parent anew and opens it; a link there is
// ErrLinkRefused.
func createJobDir(parent *os.File, jobID string) (*os.File, error) {
	link, err := isLink(parent, jobID)
	if err != nil {
		return nil, err
	}
	if link {
		return nil, linkRefused(parent.Name() + "/" + jobID)
	}
	if err := removeAll(parent, jobID); err != nil {
		return nil, err
	}
	if err := makeDirs(parent, jobID, 0o750); err != nil {
		return nil, err
	}
	return openDir(parent, jobID)
}

// CustodianFolder makes a custodian's address safe as one folder name: lower-cased,
// every character but a-z 0-9 . _ - @ + replaced by "_", no leading dot, at most 128
// bytes; "unknown" when nothing is left. A leading - + or @ becomes "_" too: a path
// then never starts with a character a spreadsheet reads as a formula (the CSV load file
// keeps paths exact), nor a command reads as an option.
func CustodianFolder(addr string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(addr) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', strings.ContainsRune("._-@+", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := strings.TrimLeft(b.String(), ".")
	if name != "" && strings.IndexByte("-+@", name[0]) >= 0 {
		name = "_" + name[1:]
	}
	if len(name) > 128 {
		name = name[:128]
	}
	if name == "" {
		return "unknown"
	}
	return name
}
