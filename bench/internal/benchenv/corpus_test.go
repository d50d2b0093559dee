package benchenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/archive"
)

func TestDistinctCopyAddsOneHeaderLine(t *testing.T) {
	assert.Equal(t, "X-Bench-Copy: 7\r\nSubject: x\r\n\r\nbody\r\n", string(DistinctCopy([]byte("Subject: x\r\n\r\nbody\r\n"), 7)))
	crlf := []byte("Subject: x\r\nFrom: a@example.org\r\n\r\nbody\r\n")
	assert.Equal(t, "X-Bench-Copy: 7\r\n"+string(crlf), string(DistinctCopy(crlf, 7)))
	mbox := []byte("From a@example.org Sun Mar  1 10:00:00 2026\nSubject: x\n\nbody\n")
	got := DistinctCopy(mbox, 8)
	assert.Equal(t, "From a@example.org Sun Mar  1 10:00:00 2026\nX-Bench-Copy: 8\nSubject: x\n\nbody\n", string(got))
	parsed, err := archive.NewParser("").Parse(got)
	require.NoError(t, err)
	assert.Equal(t, "x", parsed.Subject, "the copy keeps the original's headers")
}
