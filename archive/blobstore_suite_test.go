package archive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
	"github.com/mailledger/mailledger/archive/blobstoretest"
)

func TestLocalStoreConformance(t *testing.T) {
	blobstoretest.Run(t, func(t *testing.T) archive.BlobStore {
		s, err := archive.NewLocalStore(t.TempDir())
		require.NoError(t, err)
		return s
	})
}
