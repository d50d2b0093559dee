package app

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/projections"
)

// Defaults of the eDiscovery exports (docs/operations.md, "eDiscovery exports").
const (
	DefaultMaxGlobalExports = 3
	DefaultMaxTenantExports = 1
	DefaultExportWorkers    = export.DefaultWorkers
	// DefaultProgressItems and DefaultProgressInterval: a running job records its
	// processed items in one ledger event per 500 items or per second, whichever first.
	DefaultProgressItems    = 500
	DefaultProgressInterval = time.Second
	// DefaultMaxInFlightBytes is how many bytes of originals the running exports hold in
	// memory at once, all jobs together. An email in memory costs about twice its size
	// (the original, its decoded attachments and text), and the heap may grow to twice
	// what is live before it is collected: 64 MiB keeps an export process well under
	// 512 MiB with 25 MB messages, and never binds for ordinary mail, where each job's
	// window of 2 × workers + 2 emails is the bound.
	DefaultMaxInFlightBytes = 64 << 20
)

// ExportsConfig configures the eDiscovery exports. The zero value takes every default but
// Dir, which is required.
type ExportsConfig struct {
	// Dir is DIR_EXPORT, the root of every production.
	Dir string
	// MaxGlobal is EDISCOVERY_MAX_GLOBAL_EXPORTS: jobs running at once in all tenants.
	MaxGlobal int
	// MaxTenant is EDISCOVERY_MAX_TENANT_EXPORTS: jobs running at once in one tenant.
	MaxTenant int
	// Workers is EDISCOVERY_WORKERS (at most 32): the cap of a job's workers field.
	Workers int
	// ProgressItems is how many processed items one progress event holds at most.
	ProgressItems int
	// ProgressInterval is how long processed items wait at most for their event.
	ProgressInterval time.Duration
	// MaxInFlightBytes bounds the bytes of originals that the running jobs hold in memory
	// at once (DefaultMaxInFlightBytes when 0). A larger email is read alone.
	MaxInFlightBytes int64
	// Budget, when set, is the memory budget the jobs take their bytes from, shared with
	// the message reads (New shares one of MaxInFlightBytes); nil gives the jobs a budget
	// of MaxInFlightBytes of their own.
	Budget *MemoryBudget
	// Logger receives the runner's log; slog.Default() when nil.
	Logger *slog.Logger
}

func (c *ExportsConfig) setDefaults() {
	if c.MaxGlobal == 0 {
		c.MaxGlobal = DefaultMaxGlobalExports
	}
	if c.MaxTenant == 0 {
		c.MaxTenant = DefaultMaxTenantExports
	}
	if c.Workers == 0 {
		c.Workers = DefaultExportWorkers
	}
	if c.ProgressItems == 0 {
		c.ProgressItems = DefaultProgressItems
	}
	if c.ProgressInterval == 0 {
		c.ProgressInterval = DefaultProgressInterval
	}
	if c.MaxInFlightBytes == 0 {
		c.MaxInFlightBytes = DefaultMaxInFlightBytes
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate reports every invalid setting at once.
func (c ExportsConfig) Validate() error {
	var problems []error
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.Dir == "" {
		bad("DIR_EXPORT is empty")
	}
	if c.MaxGlobal < 0 {
		bad("EDISCOVERY_MAX_GLOBAL_EXPORTS must be at least 1, got %d", c.MaxGlobal)
	}
	if c.MaxTenant < 0 {
		bad("EDISCOVERY_MAX_TENANT_EXPORTS must be at least 1, got %d", c.MaxTenant)
	}
	if c.Workers < 0 || c.Workers > export.MaxWorkers {
		bad("EDISCOVERY_WORKERS must be 1 to %d, got %d", export.MaxWorkers, c.Workers)
	}
	if c.ProgressItems < 0 || c.ProgressItems > projections.MaxExportItemsPerEvent {
		bad("export progress batch must be 1 to %d items, got %d", projections.MaxExportItemsPerEvent, c.ProgressItems)
	}
	if c.ProgressInterval < 0 {
		bad("export progress interval %v is negative", c.ProgressInterval)
	}
	if c.MaxInFlightBytes < 0 {
		bad("export memory budget %d bytes is negative", c.MaxInFlightBytes)
	}
	return errors.Join(problems...)
}

// ExportsConfigFromEnv reads DIR_EXPORT (default $MAILLEDGER_DATA_DIR/export),
// EDISCOVERY_MAX_GLOBAL_EXPORTS, EDISCOVERY_MAX_TENANT_EXPORTS and EDISCOVERY_WORKERS with
// getenv, applies the defaults and validates them; every problem wraps ErrConfig.
func ExportsConfigFromEnv(getenv func(string) string, dataDir string) (ExportsConfig, error) {
	c := ExportsConfig{Dir: getenv("DIR_EXPORT")}
	if c.Dir == "" {
		c.Dir = filepath.Join(dataDir, "export")
	}
	var problems []error
	for _, v := range []struct {
		name string
		dst  *int
	}{
		{"EDISCOVERY_MAX_GLOBAL_EXPORTS", &c.MaxGlobal},
		{"EDISCOVERY_MAX_TENANT_EXPORTS", &c.MaxTenant},
		{"EDISCOVERY_WORKERS", &c.Workers},
	} {
		raw := getenv(v.name)
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			problems = append(problems, fmt.Errorf("%w: %s must be a positive integer, got %q", ErrConfig, v.name, raw))
			continue
		}
		*v.dst = n
	}
	c.setDefaults()
	problems = append(problems, c.Validate())
	return c, errors.Join(problems...)
}
