#!/usr/bin/env bash
# The whole test suite, on a fresh machine: static checks, then every test
# with the race detector against a real MinIO server and an Apache Kafka
# broker that this script installs (once, cached outside the repository)
# and starts, then the engine tests (Spark and DuckDB reading the lakes) in
# a cached Python environment. Pass -short for the quick inner loop
# without servers: scripts/test.sh -short
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== static checks"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted" >&2; exit 1; fi
go vet ./...
go mod tidy -diff

if [ "${1:-}" = "-short" ]; then
  go test -short -shuffle=on ./...
  exit 0
fi

echo "== servers"
source scripts/minio.sh
source scripts/kafka.sh
source scripts/spark.sh
source scripts/postgres.sh
source scripts/restcatalog.sh
# A server killed by its signal makes wait return 143: stopping is never the test's failure.
trap 'minio_stop || true; kafka_stop || true; postgres_stop || true; restcatalog_stop || true' EXIT
minio_start
kafka_start
postgres_start
restcatalog_start
spark_install

echo "== tests"
go test -race -shuffle=on -count=1 -timeout 30m ./...
# Allocation counts are not the steady state under the race detector
# (its sync.Pool drops items at random), so these run once without it.
go test -count=1 -run 'TestEncodeAllocatesWithinItsWeight|TestEncodeWeightCoversIncompressibleValues' ./writer
# The JSON parser comparison is a module of its own (its parsers are not
# the exporter's dependencies): its test holds each parser to the
# decoder's reading of the records, so that the benchmark compares like
# with like.
(cd tools/parsebench && go mod tidy -diff && go vet ./... && go test -count=1 ./...)
# Spark and DuckDB read every lake the exporter writes (enginetest/).
go build -o "$MINIO_DATA/exporter" ./cmd/exporter
EXPORTER_TEST_EXPORTER_BIN="$MINIO_DATA/exporter" "$EXPORTER_TEST_PYTHON" -m pytest -q -p no:cacheprovider enginetest
