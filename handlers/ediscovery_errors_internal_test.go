package handlers

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/domain"
	"github.com/mailledger/mailledger/domain/export"
	"github.com/mailledger/mailledger/production"
)

func TestClassifyMapsExportErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{fmt.Errorf("create: %w", export.ErrBatesConflict), 409, "bates_range_conflict"},
		{fmt.Errorf("%w: export x is running", export.ErrNotReady), 409, "export_not_ready"},
		{fmt.Errorf("%w: export x: no such directory", app.ErrProductionMissing), 410, "export_files_missing"},
		{&domain.TransitionError{Subject: "export x", State: "completed", Action: "cancel", Need: "pending or running"}, 409, "invalid_transition"},
		{fmt.Errorf("%w: export x", app.ErrNotFound), 404, "not_found"},
		{fmt.Errorf("%w: tenant %q", production.ErrInvalid, "../x"), 500, "internal"},
		{ErrExportsUnavailable, 503, "exports_unavailable"},
	}
	for _, tc := range cases {
		e := classify(tc.err)
		assert.Equal(t, tc.status, e.status, "%v", tc.err)
		assert.Equal(t, tc.code, e.Code, "%v", tc.err)
	}
	assert.NotContains(t, classify(fmt.Errorf("%w: /srv/export/acme", app.ErrProductionMissing)).Message, "/srv",
		"the export directory is not shown")
}
