#!/usr/bin/env bash
# Compares the paths of the conversion benchmark in one go: the exporter
# from a file to a local folder and to MinIO, from the Apache Kafka broker
# (a 3-partition topic; BENCH_PARTITIONS) to a local folder and to MinIO,
# and DuckDB on the same stream, and prints the ratios. MinIO and Kafka
# are started here (scripts/minio.sh, scripts/kafka.sh). BENCH_RECORDS
# sets the stream size (default 200000).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/minio.sh
source scripts/kafka.sh
trap 'minio_stop || true; kafka_stop || true' EXIT
minio_start >/dev/null
kafka_start >/dev/null
out=$(go test ./pipeline -run XXX -bench 'Convert/(exporter|exporter-s3|exporter-kafka|exporter-kafka-s3|duckdb)$' \
  -benchtime "${BENCH_TIME:-3x}" -benchmem "$@")
echo "$out"
# The value before a unit, on the line of one sub-benchmark (NAME-GOMAXPROCS).
awk 'function v(unit,  i) { for (i = 1; i <= NF; i++) if ($(i+1) == unit) return $i }
     $1 ~ /^BenchmarkConvert\/exporter-[0-9]+$/          { e = v("records/s"); ec = v("cpu-ns/record") }
     $1 ~ /^BenchmarkConvert\/exporter-s3-[0-9]+$/       { s = v("records/s") }
     $1 ~ /^BenchmarkConvert\/exporter-kafka-[0-9]+$/    { kl = v("records/s"); kc = v("cpu-ns/record") }
     $1 ~ /^BenchmarkConvert\/exporter-kafka-s3-[0-9]+$/ { k = v("records/s") }
     $1 ~ /^BenchmarkConvert\/duckdb-[0-9]+$/            { d = v("records/s") }
     END {
       if (e && d) printf "exporter (local) %d records/s, duckdb %d records/s: ratio %.2f\n", e, d, e/d
       if (e && s) printf "exporter (file -> MinIO) %d records/s: %.2f of local\n", s, s/e
       if (e && kl) printf "exporter (Kafka -> local) %d records/s: %.2f of file -> local; CPU per record %.2f times\n", kl, kl/e, kc/ec
       if (s && k) printf "exporter (Kafka -> MinIO) %d records/s: %.2f of file -> MinIO\n", k, k/s
     }' <<<"$out"
