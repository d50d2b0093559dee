#!/usr/bin/env bash
# bench/run.sh — the benchmarks of docs/performance.md, called by `make bench`.
#
# It starts no server: PostgreSQL and MySQL/MariaDB are used where TEST_POSTGRES_URL and
# TEST_MYSQL_URL point, or at the local servers by default. ledgerbench and archivebench
# create a fresh database on each server (and fresh SQLite files and directories under
# $TMPDIR) for the run and drop them afterwards; a server that cannot be reached is
# reported as SKIP (a failure under CI=true). archivebench reads the shared corpus in
# place (../shared/corpus, or $MAILLEDGER_CORPUS) and never copies it into the project.
#
# Environment: LEDGERBENCH_FLAGS and ARCHIVEBENCH_FLAGS (extra flags, see
# `go run ./bench/ledgerbench -h` and `go run ./bench/archivebench -h`), EXPORTBENCH_FLAGS
# (`go run ./bench/exportbench -h`; exportbench works on SQLite under $TMPDIR only),
# BENCHTIME (for the Go benchmarks in bench/, default 1x), GO (default go).
# SMTPBENCH_FLAGS (`go run ./bench/smtpbench -h`) and S3BENCH_FLAGS (`go run ./bench/s3bench -h`):
# s3bench uses the S3 server of TEST_S3_ENDPOINT (TEST_S3_ACCESS_KEY, TEST_S3_SECRET_KEY) or
# starts versitygw (on PATH or in $(go env GOPATH)/bin) over a directory under $TMPDIR; with
# neither it reports SKIP (a failure under CI=true).
# SCALEBENCH=1 adds the million-message scale benchmark (bench/scalebench), with
# SCALEBENCH_FLAGS (`go run ./bench/scalebench -h`); it is opt-in because it takes long
# (see the estimate below).
set -euo pipefail
cd "$(dirname "$0")/.."

: "${TEST_POSTGRES_URL:=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
: "${TEST_MYSQL_URL:=mysql://root@tcp(127.0.0.1:3306)/test}"
export TEST_POSTGRES_URL TEST_MYSQL_URL
GO=${GO:-go}
BENCHTIME=${BENCHTIME:-1x}

echo "== machine: $(nproc) cores (nproc), $($GO version), $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== ledger append throughput and Verify: go run ./bench/ledgerbench ${LEDGERBENCH_FLAGS:-}"
# shellcheck disable=SC2086 # LEDGERBENCH_FLAGS is a list of flags
$GO run ./bench/ledgerbench ${LEDGERBENCH_FLAGS:-}

echo
echo "== eDiscovery export and ZIP download (sqlite): go run ./bench/exportbench ${EXPORTBENCH_FLAGS:-}"
# shellcheck disable=SC2086 # EXPORTBENCH_FLAGS is a list of flags
$GO run ./bench/exportbench ${EXPORTBENCH_FLAGS:-}

if compgen -G "bench/*_test.go" >/dev/null; then
	echo
	echo "== Go benchmarks in bench/ (consumer lag): go test -run '^\$' -bench . -benchtime $BENCHTIME ./bench"
	$GO test -run '^$' -bench . -benchtime "$BENCHTIME" ./bench
fi

echo
echo "== archive import throughput and search latency: go run ./bench/archivebench ${ARCHIVEBENCH_FLAGS:-}"
# shellcheck disable=SC2086 # ARCHIVEBENCH_FLAGS is a list of flags
$GO run ./bench/archivebench ${ARCHIVEBENCH_FLAGS:-}
echo
echo "== GDPR erasure assessment and execution: go run ./bench/erasurebench ${ERASUREBENCH_FLAGS:-}"
# shellcheck disable=SC2086 # ERASUREBENCH_FLAGS is a list of flags
$GO run ./bench/erasurebench ${ERASUREBENCH_FLAGS:-}
echo
echo "== SMTP ingest against import (issue 12): go run ./bench/smtpbench ${SMTPBENCH_FLAGS:-}"
# shellcheck disable=SC2086 # SMTPBENCH_FLAGS is a list of flags
$GO run ./bench/smtpbench ${SMTPBENCH_FLAGS:-}
echo
echo "== S3 uploads and import into S3 mode (issue 12): go run ./bench/s3bench ${S3BENCH_FLAGS:-}"
# shellcheck disable=SC2086 # S3BENCH_FLAGS is a list of flags
$GO run ./bench/s3bench ${S3BENCH_FLAGS:-}
if [ "${SCALEBENCH:-}" = 1 ]; then
	# The full run (1,000,000 messages in steps of 100,000 on sqlite, postgres and mysql,
	# searches and assessments after every step) takes about 3 to 4 hours on the 2-core
	# development machine when nothing else runs (extrapolated from runs of 20,000 and
	# 100,000 messages: imports of about 20 min on SQLite, 30 on PostgreSQL and an hour or
	# more on MariaDB, searches of 1 to 3 min a step and database), longer on a shared one.
	# It needs about 10 GB free under -tmpdir (default $TMPDIR: the mbox files, the message
	# store and the SQLite database), and room on the servers for their databases.
	echo
	echo "== scale: a million messages, step by step: go run ./bench/scalebench ${SCALEBENCH_FLAGS:-}"
	# shellcheck disable=SC2086 # SCALEBENCH_FLAGS is a list of flags
	$GO run ./bench/scalebench ${SCALEBENCH_FLAGS:-}
fi
echo "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
