package archive_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
)

// TestParseBase64ShortUnpadded is a body too short for a padded base64 decode's buffer
// (found by FuzzParseSplit: it used to panic in encoding/base64).
func TestParseBase64ShortUnpadded(t *testing.T) {
	for body, want := range map[string]string{"QQ": "A", "QUI": "AB", "QUJD": "ABC", "Q": ""} {
		m, err := archive.NewParser("").Parse([]byte("Content-Transfer-Encoding: base64\n\n" + body))
		require.NoError(t, err, body)
		assert.Equal(t, want, m.Text, body)
	}
}
