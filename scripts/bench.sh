#!/usr/bin/env bash
# The end-to-end benchmark (tools/bench): generates a reproducible stream
# (kept in $BENCH_WORK and reused), builds the exporter and runs it as a
# child process on it, runs DuckDB's one-pass conversion of the same input,
# prints records/s, input MB/s, output bytes, peak RSS against the budget,
# CPU time and allocations, the exporter/DuckDB ratio, and checks the
# exporter's output row for row against the input.
#
#   scripts/bench.sh                                  # 2M records, 4 tables, 12-20 columns, 256 MiB budget
#   scripts/bench.sh -tables 500                      # many tables
#   scripts/bench.sh -compare-tables 500 -runs 3      # 4 and 500 tables alternately, and their ratio
#   scripts/bench.sh -format qlik                     # Qlik Replicate messages
#   scripts/bench.sh -records 200000 -runs 3          # quick
#   scripts/bench.sh -cpu-profile /tmp/cpu.out        # then: go tool pprof "$BENCH_WORK/exporter" /tmp/cpu.out
#   scripts/bench.sh -- --compression snappy          # flags after -- go to `exporter run`
#   BENCH_WORK=/dev/shm/lakehouse-bench scripts/bench.sh   # on tmpfs: no disk reads when the page cache is short
#
# scripts/bench-paths.sh compares the exporter's paths (local, MinIO, Kafka).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${BENCH_WORK:-${TMPDIR:-/tmp}/lakehouse-bench}
mkdir -p "$work"
go build -o "$work/exporter" ./cmd/exporter
exec go run ./tools/bench -work "$work" -exporter "$work/exporter" -columns 12 -max-columns 20 "$@"
