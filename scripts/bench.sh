#!/usr/bin/env bash
# Runs the conversion benchmark (exporter and DuckDB on the same stream, in
# the same run) and prints the ratio. BENCH_RECORDS sets the stream size.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test ./pipeline -run XXX -bench 'BenchmarkConvert' -benchtime "${BENCH_TIME:-3x}" -benchmem "$@" | tee /dev/stderr)
awk '/BenchmarkConvert\/exporter/ {for(i=1;i<=NF;i++) if($(i+1)=="records/s") e=$i}
     /BenchmarkConvert\/duckdb/   {for(i=1;i<=NF;i++) if($(i+1)=="records/s") d=$i}
     END { if (e && d) printf "exporter %d records/s, duckdb %d records/s, ratio %.2f\n", e, d, e/d }' <<<"$out"
