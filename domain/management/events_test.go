package management_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/domain/management"
)

// Rules 1 and 3: the name is the one given, the password never stored, and a stored
// event decodes back to its Change.
func TestChangeHoldsNoPassword(t *testing.T) {
	t.Parallel()
	c := management.NewChange(management.UserUpdated, "user", "7",
		map[string]any{"username": "a", "password": "$2a$x"}, map[string]any{"username": "b", "password": "$2a$y"}, true)
	assert.Equal(t, "management.user_updated", c.EventType())
	raw, err := json.Marshal(c)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "$2a$")
	e, err := management.Decode(management.UserUpdated, raw)
	require.NoError(t, err)
	got := e.(*management.Change)
	assert.Equal(t, "management.user_updated", got.EventType())
	assert.True(t, got.PasswordChanged)
	assert.Equal(t, "b", got.After["username"])
	_, err = management.Decode("management.nope", raw)
	assert.Error(t, err)
}
