package app

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mailledger/mailledger/archive"
)

// Each use case with settings takes a Config struct like those below (and ExportsConfig,
// MessagesConfig, BackgroundConfig, CheckpointerConfig): the zero value takes every
// default, Validate reports every invalid setting at once (each wrapping ErrConfig), and
// the constructor validates, then fills in the defaults (setDefaults).

// ApplicationConfig configures New. The zero value gives the ledger, the legal holds and
// the certificates only (no PDF service).
type ApplicationConfig struct {
	// Archive is the email archive, which Messages reads and Erasure erases from; nil
	// leaves Messages, Erasure and Exports nil (their routes answer 503).
	Archive *archive.Archive
	// Erasure configures the erasure workflow (used only with Archive).
	Erasure ErasureConfig
	// Certificates configures the certificates (PDFSERVICE_URL).
	Certificates CertificatesConfig
	// Smarthost delivers restored messages (SMARTHOST_ADDR); nil: no restores.
	Smarthost Smarthost
	// HeaderChecksChanged is called after the management API changed header checks
	// (HeaderTagger.Invalidate); nil: nobody is told.
	HeaderChecksChanged func()
	// Storage reports the message store's usage and health to the management API's
	// customer list; nil: the messages' sizes, no store check.
	Storage StorageUsage
	// RetentionChanged is called after a retention rule was added or deleted
	// (RetentionPolicy.Invalidate); nil: nobody is told.
	RetentionChanged func()
	// Exports, when set, gives the Application the eDiscovery exports (DIR_EXPORT and the
	// EDISCOVERY_* limits); they read Archive, which they need. Nil means no exports.
	Exports *ExportsConfig
	// Multitenancy is MULTITENANCY: customers are tenants (Tenancy, Management).
	Multitenancy bool
}

// Validate reports every invalid setting at once.
func (c ApplicationConfig) Validate() error {
	problems := []error{c.Erasure.Validate(), c.Certificates.Validate()}
	if c.Exports != nil {
		if c.Archive == nil {
			problems = append(problems, errors.New("app: exports need the archive (ApplicationConfig.Archive)"))
		}
		problems = append(problems, c.Exports.Validate())
	}
	return errors.Join(problems...)
}

// ErasureConfig configures the erasure workflow. The zero value takes every default,
// which keeps the segregation of duties.
type ErasureConfig struct {
	// AllowSameApprover is GDPR_DISTINCT_APPROVER=0: the creator of a request may approve
	// it. False, the default, refuses that. Turning it on lets one person create and
	// approve an erasure, which removes the segregation of duties.
	AllowSameApprover bool
	// Clock dates request ids (their year) and the retention of erased messages, and
	// tells which requests are overdue; time.Now when nil.
	Clock func() time.Time
	// Logger receives the background consumers' log (each completed erasure at info);
	// slog.Default() when nil.
	Logger *slog.Logger
	// EraseBatch is how many messages one erasure transaction marks;
	// archive.DefaultEraseBatch when 0.
	EraseBatch int
	// Kept are the certificate bundles kept outside the database (CertificateKeeper):
	// Reapply also applies the erasures they prove that the database does not know.
	Kept KeptCertificates
}

func (c *ErasureConfig) setDefaults() {
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.EraseBatch == 0 {
		c.EraseBatch = archive.DefaultEraseBatch
	}
}

// Validate reports every invalid setting at once.
func (c ErasureConfig) Validate() error {
	if c.EraseBatch < 0 {
		return fmt.Errorf("%w: erase batch %d is negative", ErrConfig, c.EraseBatch)
	}
	return c.Kept.Validate()
}

// CertificatesConfig configures the certificates. The zero value has no PDF service.
type CertificatesConfig struct {
	// PDFServiceURL is PDFSERVICE_URL, the Gotenberg-compatible service that turns the
	// HTML certificate into a PDF. Empty, the default, means PDF answers
	// render.ErrPDFUnavailable.
	PDFServiceURL string
}

// Validate reports an invalid PDF service URL.
func (c CertificatesConfig) Validate() error {
	if c.PDFServiceURL != "" && !isServiceURL(c.PDFServiceURL) {
		return fmt.Errorf("%w: PDF service URL %q must be an http or https URL", ErrConfig, redactURL(c.PDFServiceURL))
	}
	return nil
}

// PurgerConfig configures a Purger. The zero value takes every default.
type PurgerConfig struct {
	// Clock gives the time whose retention cutoff a pass applies; time.Now when nil.
	Clock func() time.Time
}

func (c *PurgerConfig) setDefaults() {
	if c.Clock == nil {
		c.Clock = time.Now
	}
}

// Validate reports nothing: every PurgerConfig is valid.
func (c PurgerConfig) Validate() error { return nil }

// ReindexerConfig configures a Reindexer. The zero value takes every default.
type ReindexerConfig struct {
	// Clock dates the end of a run in its ledger event; time.Now when nil.
	Clock func() time.Time
}

func (c *ReindexerConfig) setDefaults() {
	if c.Clock == nil {
		c.Clock = time.Now
	}
}

// Validate reports nothing: every ReindexerConfig is valid.
func (c ReindexerConfig) Validate() error { return nil }
