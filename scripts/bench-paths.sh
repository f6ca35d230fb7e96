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
out=$(go test ./pipeline -run XXX -bench 'BenchmarkConvert' -benchtime "${BENCH_TIME:-3x}" -benchmem "$@" | tee /dev/stderr)
awk '/BenchmarkConvert\/exporter-kafka-s3/ {for(i=1;i<=NF;i++) if($(i+1)=="records/s") k=$i; next}
     /BenchmarkConvert\/exporter-kafka/ {for(i=1;i<=NF;i++) if($(i+1)=="records/s") kl=$i; next}
     /BenchmarkConvert\/exporter-s3/ {for(i=1;i<=NF;i++) if($(i+1)=="records/s") s=$i; next}
     /BenchmarkConvert\/exporter/    {for(i=1;i<=NF;i++) if($(i+1)=="records/s") e=$i}
     /BenchmarkConvert\/duckdb/      {for(i=1;i<=NF;i++) if($(i+1)=="records/s") d=$i}
     END {
       if (e && d) printf "exporter (local) %d records/s, duckdb %d records/s: ratio %.2f\n", e, d, e/d
       if (e && s) printf "exporter (file -> MinIO) %d records/s: %.2f of local\n", s, s/e
       if (e && kl) printf "exporter (Kafka -> local) %d records/s: %.2f of file -> local\n", kl, kl/e
       if (s && k) printf "exporter (Kafka -> MinIO) %d records/s: %.2f of file -> MinIO\n", k, k/s
     }' <<<"$out"
