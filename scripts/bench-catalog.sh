#!/usr/bin/env bash
# Measures what publishing to Iceberg tables costs, as users run it: the
# benchmark stream (scripts/bench.sh: BENCH_RECORDS records, by default
# 2,000,000, 12 columns) exported by `exporter run --once` to a local
# folder without a catalog and with --catalog sql on a throw-away
# PostgreSQL (scripts/postgres.sh), for 5 tables and for 500
# (BENCH_TABLE_COUNTS). The two runs alternate, without and with the
# catalog, BENCH_PAIRS times (default 5): a shared machine's speed
# drifts, and a ratio taken within a pair does not see it. Prints each
# pair, then the ratio of the medians of records/s and the range of the
# pairs' ratios, for a first run (which creates the tables) and for the
# runs after it (the tables there), with the commit latency per table per
# round (the median of the "iceberg round committed" latencies of the
# runs). Every run writes a new folder, so each exports the whole stream;
# with the catalog it appends a round to the same tables.
# BENCH_RECORDS=200000 is the worst case: one round of 500 tables of 400
# rows each. The in-process benchmark behind it, for profiles:
# go test ./pipeline -run XXX -bench 'Convert/exporter-catalog' (BENCH_TABLES).
set -euo pipefail
cd "$(dirname "$0")/.."
records=${BENCH_RECORDS:-2000000}
pairs=${BENCH_PAIRS:-5}
work=$(mktemp -d)
source scripts/postgres.sh
trap 'postgres_stop || true; rm -rf "$work"' EXIT
postgres_start >/dev/null
go build -o "$work/exporter" ./cmd/exporter
go build -o "$work/genstream" ./tools/genstream

now() { date +%s.%N; }
# export N [catalog args...]: one --once run into a new folder; prints
# its seconds, and keeps its debug log in $work/log.N.
export_run() {
  local n=$1
  shift
  rm -rf "$work/lake"
  local s e
  s=$(now)
  "$work/exporter" run --source "file:$work/stream.jsonl" --sink "file://$work/lake" --once \
    --log-level debug --log-format json --progress-every 0 "$@" >/dev/null 2>"$work/log.$n"
  e=$(now)
  awk -v a="$s" -v b="$e" 'BEGIN {printf "%.2f", b - a}'
}
# latencies prints the commit latencies (ms) of the runs' logs.
latencies() {
  cat "$@" | grep '"msg":"iceberg round committed"' | sed 's/.*"latency":\([0-9]*\).*/\1/' | awk '{printf "%.3f\n", $1 / 1e6}'
}
median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

for tables in ${BENCH_TABLE_COUNTS:-5 500}; do
  echo "== $tables tables, $records records"
  "$work/genstream" -records "$records" -tables "$tables" -columns 12 -out "$work/stream.jsonl"
  catalog=(--catalog sql --catalog-uri "$EXPORTER_TEST_POSTGRES_DSN" --catalog-namespace "bench$tables"
    --catalog-warehouse "file://$work/warehouse$tables")
  plain=$(export_run plain)
  created=$(export_run created "${catalog[@]}")
  echo "first run, creating the tables: without a catalog ${plain} s, with --catalog sql ${created} s: $(awk -v p="$plain" -v c="$created" 'BEGIN {printf "%.2f", p / c}')"
  : >"$work/pairs"
  rm -f "$work"/log.c*
  for ((i = 1; i <= pairs; i++)); do
    p=$(export_run "p$i")
    c=$(export_run "c$i" "${catalog[@]}")
    echo "$p $c" >>"$work/pairs"
    echo "pair $i: without a catalog ${p} s, with --catalog sql ${c} s: $(awk -v p="$p" -v c="$c" 'BEGIN {printf "%.2f", p / c}')"
  done
  mp=$(cut -d' ' -f1 "$work/pairs" | median)
  mc=$(cut -d' ' -f2 "$work/pairs" | median)
  range=$(awk '{r = $1 / $2; if (NR == 1 || r < lo) lo = r; if (NR == 1 || r > hi) hi = r} END {printf "%.2f to %.2f", lo, hi}' "$work/pairs")
  commits=$(latencies "$work"/log.c* | wc -l)
  latency=$(latencies "$work"/log.c* | median)
  awk -v t="$tables" -v r="$records" -v mp="$mp" -v mc="$mc" -v rg="$range" -v n="$commits" -v runs="$pairs" -v l="$latency" 'BEGIN {
    printf "%s tables, tables there: without a catalog %d records/s, with --catalog sql (PostgreSQL) %d records/s: %.2f by the medians (pairs %s); %d table commits a run, %.1f ms each (median)\n",
      t, r / mp, r / mc, mp / mc, rg, n / runs, l
  }'
done
