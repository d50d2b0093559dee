package s3store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPing(t *testing.T) {
	cfg := testConfig(t)
	assert.NoError(t, open(t, cfg).Ping(context.Background()), "a running store answers")
	cfg.Hostname = "127.0.0.1:1"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	assert.Error(t, open(t, cfg).Ping(ctx), "nothing listens there")
}
