package handlers_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/app"
	"github.com/mailledger/mailledger/archive/archivetest"
	"github.com/mailledger/mailledger/database"
)

// folderStore reports a store folder's health, and a figure of its own for the tenants it
// has one for (as the bucket statistics give in S3 mode).
type folderStore struct {
	dir     string
	figures map[string]int64
}

func (s folderStore) Used(_ context.Context, tenant string) (int64, bool, error) {
	n, ok := s.figures[tenant]
	return n, ok, nil
}

func (s folderStore) Check(context.Context) error {
	if _, err := os.Stat(s.dir); err != nil {
		return errors.New("the store's folder is missing")
	}
	return nil
}

// TestCustomerUsedAndStatusFromTheStore: `used` is the store's figure where it has one
// (bucket statistics), else the sizes of the tenant's messages; `status` says when the
// store does not answer.
func TestCustomerUsedAndStatusFromTheStore(t *testing.T) {
	t.Parallel()
	f := newManagementFixture(t, database.SQLite)
	dir := filepath.Join(t.TempDir(), "store")
	require.NoError(t, os.Mkdir(dir, 0o700))
	application, err := app.New(f.store, f.signer, app.ApplicationConfig{Archive: f.arc, Multitenancy: true,
		Storage: folderStore{dir: dir, figures: map[string]int64{"beta": 123456}}})
	require.NoError(t, err)
	f.api.Attach(application)
	raw := archivetest.Message("a@acme.test", []string{"b@acme.test"}, nil, "s", "body", day)
	f.archiveMail("acme", raw)

	byID := func() map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, c := range f.readArray(adminUser, "get_customer_list", "") {
			out[c["customer_id"].(string)] = c
		}
		return out
	}
	list := byID()
	assert.Equal(t, "123456", list["beta"]["used"], "the store's figure")
	assert.NotEqual(t, "0", list["acme"]["used"], "no figure: the messages' sizes")
	assert.Equal(t, "OK", list["acme"]["status"])

	require.NoError(t, os.Remove(dir))
	list = byID()
	assert.Equal(t, "store: the store's folder is missing", list["acme"]["status"])
}
