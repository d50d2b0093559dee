# mailledger: make run (the service on its embedded SQLite default), make test.
GO       ?= go
BIN      := bin/mailledger
PKGS     := ./...
GOFLAGS  ?=
TESTFLAGS ?= -timeout 40m
BENCHTIME ?= 1x

.PHONY: build run test test-race bench lint fmt clean screenshots

build:
	$(GO) build -o $(BIN) ./cmd/mailledger

run: build
	./$(BIN) serve

# Tests against SQLite always; against PostgreSQL and MySQL when TEST_POSTGRES_URL and
# TEST_MYSQL_URL are set (.ci/run sets them; locally they skip with a SKIP line). lint runs
# first. tools/testsummary runs `go test -json`, prints the package lines and the output of
# every failure, lists the skipped tests with their reasons, and ends with one line
# "N passed, N failed, N skipped"; it exits 1 when a test or a build failed.
test: build lint
	$(GO) build -o bin/testsummary ./tools/testsummary
	GO=$(GO) bin/testsummary $(TESTFLAGS) -p 2 $(PKGS)

# The race detector over the packages that run goroutines of their own: the ledger and
# its consumers, the use cases (exports, background work), the archive and the production
# writer (parallel writes) and the HTTP handlers. -short leaves out the tests that cost minutes without adding
# concurrency under race (child processes killed mid-stream, messages of 24 to 290 MB
# parsed for their heap peak); the same tests run in `make test`. Measured with CI=true on
# SQLite, PostgreSQL and MariaDB (2026-11-24, 2 cores shared with four other test runs, load
# 8 to 16): 15 min wall at 48% of one core, 7 min of CPU (without -short: 24 min). On the
# two cores alone that is about 4 to 6 minutes.
RACE_PKGS := ./eventstore/... ./app/... ./archive/... ./production/... ./handlers/...
test-race:
	$(GO) build -o bin/testsummary ./tools/testsummary
	GO=$(GO) bin/testsummary -race -short $(TESTFLAGS) -p 2 $(RACE_PKGS)

bench: build
	bash bench/run.sh

# Full-page PNGs of the console's main pages, 1280 pixels wide, into docs/console (shown
# in docs/console.md), taken in a headless Chromium (apt-get install chromium) over a
# fixture archive. Look at them after a change to the pages.
screenshots:
	CONSOLE_SCREENSHOTS=$(CURDIR)/docs/console $(GO) test -count=1 -run '^TestScreenshots$$' ./console/

# gofmt, go vet, staticcheck (its default checks, unused code included; a finding kept on
# purpose carries a //lint:ignore with its reason), then the import rules. staticcheck is
# a tool dependency pinned in go.mod, so `go tool` builds that version from the module
# cache: nothing to install first.
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)
	@bad=$$($(GO) list -f '{{range .Imports}}{{.}}{{"\n"}}{{end}}' ./domain/... | sort -u | \
		grep -E '^[^/]+\.[^/]+/' | grep -v -e '^github.com/google/uuid$$' -e '^github.com/mailledger/mailledger/domain\(/\|$$\)' || true); \
	if [ -n "$$bad" ]; then echo "domain/ must import only the standard library, uuid and domain/ itself, found:"; echo "$$bad"; exit 1; fi
	@bad=$$($(GO) list -deps ./certificate ./projections | grep -x -e 'net/http' -e 'html/template' || true); \
	if [ -n "$$bad" ]; then echo "certificate/ and projections/ must pull in no HTTP client and no template (certificate/render holds them), found:"; echo "$$bad"; exit 1; fi
	$(GO) run ./tools/arrows
	@echo "lint ok"

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
