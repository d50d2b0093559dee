package app_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mailledger/mailledger/app"
)

// TestUseCaseConfigsValidate: the zero value of every use case's Config is valid (it takes
// the defaults), and each invalid setting is reported as a configuration problem.
func TestUseCaseConfigsValidate(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]interface{ Validate() error }{
		"application":  app.ApplicationConfig{},
		"erasure":      app.ErasureConfig{},
		"certificates": app.CertificatesConfig{},
		"messages":     app.MessagesConfig{},
		"purger":       app.PurgerConfig{},
		"reindexer":    app.ReindexerConfig{},
		"pdf service":  app.CertificatesConfig{PDFServiceURL: "http://gotenberg:3000"},
	} {
		assert.NoError(t, c.Validate(), name)
	}
	for name, c := range map[string]interface{ Validate() error }{
		"negative erase batch":   app.ErasureConfig{EraseBatch: -1},
		"pdf service not http":   app.CertificatesConfig{PDFServiceURL: "ftp://gotenberg"},
		"negative budget wait":   app.MessagesConfig{BudgetWait: -1},
		"negative text limit":    app.MessagesConfig{MaxTextBytes: -1},
		"erasure in application": app.ApplicationConfig{Erasure: app.ErasureConfig{EraseBatch: -1}},
		"exports without dir":    app.ApplicationConfig{Exports: &app.ExportsConfig{}},
	} {
		assert.ErrorIs(t, c.Validate(), app.ErrConfig, name)
	}
	assert.Error(t, app.ApplicationConfig{Exports: &app.ExportsConfig{Dir: "x"}}.Validate(), "exports need the archive")
}
