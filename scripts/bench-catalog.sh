#!/usr/bin/env bash
# Measures what publishing to Iceberg tables costs: the conversion
# benchmark's stream exported to a local folder without a catalog and
# with --catalog sql on a throw-away PostgreSQL (scripts/postgres.sh), in
# the same run, for 5 tables and for 500, and prints the ratios: for a
# first run, which creates the tables, and for the runs after it. BENCH_RECORDS sets the
# stream size: by default the benchmark stream's 2,000,000 records
# (scripts/bench.sh); 200000 is the worst case, a --once run whose one
# round commits 500 tables of 400 rows each.
set -euo pipefail
cd "$(dirname "$0")/.."
export BENCH_RECORDS=${BENCH_RECORDS:-2000000}
source scripts/postgres.sh
trap 'postgres_stop || true' EXIT
postgres_start >/dev/null
for tables in ${BENCH_TABLE_COUNTS:-5 500}; do
  echo "== $tables tables"
  out=$(BENCH_TABLES=$tables go test ./pipeline -run XXX -bench 'Convert/exporter(-catalog(-warm)?)?$' \
    -benchtime "${BENCH_TIME:-3x}" -benchmem "$@")
  echo "$out"
  awk -v t="$tables" '
    /BenchmarkConvert\/exporter-catalog-warm/ {for(i=1;i<=NF;i++) {if($(i+1)=="records/s") w=$i; if($(i+1)=="cpu-ns/record") wc=$i; if($(i+1)=="commit-ms") wl=$i; if($(i+1)=="commits/run") wn=$i}; next}
    /BenchmarkConvert\/exporter-catalog/ {for(i=1;i<=NF;i++) {if($(i+1)=="records/s") c=$i; if($(i+1)=="cpu-ns/record") cc=$i; if($(i+1)=="commit-ms") cl=$i; if($(i+1)=="commits/run") cn=$i}; next}
    /BenchmarkConvert\/exporter/ {for(i=1;i<=NF;i++) {if($(i+1)=="records/s") e=$i; if($(i+1)=="cpu-ns/record") ec=$i}}
    END {
      if (e && c) printf "%s tables: without a catalog %d records/s; with --catalog sql (PostgreSQL), creating the tables %d records/s: %.2f (CPU per record %.2f times; %d table commits a run, %.1f ms each)\n", t, e, c, c/e, cc/ec, cn, cl
      if (e && w) printf "%s tables: with --catalog sql (PostgreSQL), tables already there %d records/s: %.2f (CPU per record %.2f times; %d table commits a run, %.1f ms each)\n", t, w, w/e, wc/ec, wn, wl
    }' <<<"$out"
done
