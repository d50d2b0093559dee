package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mailledger/mailledger/domain"
)

type noted struct {
	Text string `json:"text"`
}

func (*noted) EventType() string  { return "test.noted" }
func (*noted) SchemaVersion() int { return 1 }

func TestRegistryDecode(t *testing.T) {
	t.Parallel()
	reg := domain.Registry{"test.noted": func() domain.Event { return &noted{} }}
	e, err := reg.Decode("test.noted", []byte(`{"text":"hello"}`))
	require.NoError(t, err)
	assert.Equal(t, &noted{Text: "hello"}, e)

	_, err = reg.Decode("test.unknown", []byte(`{}`))
	assert.EqualError(t, err, `unknown event type "test.unknown"`)
	_, err = reg.Decode("test.noted", []byte(`{"text":1}`))
	var typeErr *json.UnmarshalTypeError
	assert.ErrorAs(t, err, &typeErr, "got %v; want the JSON error wrapped", err)
}
