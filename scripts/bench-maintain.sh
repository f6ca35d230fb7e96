#!/usr/bin/env bash
# Measures `exporter maintain` on a lake of many small files: a generated
# stream (BENCH_RECORDS records over BENCH_TABLES tables, by default the
# benchmark stream's 2,000,000 records (scripts/bench.sh) and 500,
# and BENCH_STEP of op_ts between records, 10ms by default; the issue's
# stream of 600,000 records over three days is BENCH_RECORDS=600000
# BENCH_STEP=430ms)
# exported with --catalog sql (SQLite) in BENCH_ROUNDS commit rounds
# (default 20; the input file grows by a slice per round, so each
# round adds a file per table it touches), then, on the lake as the
# rounds left it, a compaction pass (`maintain --expire-after 0
# --orphan-age 0`: it rewrites, expires nothing and removes no orphans)
# and after it an expiry pass (`--expire-after 1ns --keep-snapshots 1`:
# every snapshot but the newest expires, so the replaced files are
# deleted and glob scans count each row once), alternated with the
# exporter's own run on the whole stream (BENCH_PAIRS pairs, default 3).
# Prints files and bytes of the tables' folders before and after, the
# compaction's time, its MB/s (bytes of the files replaced) and rows/s,
# the exporter's records/s, the ratio of the two pair by pair and its
# median, the same ratio for compaction and expiry together, and
# DuckDB's and Spark's time for a full scan of every table's files before
# and after (Spark from the engine tests' cached environment,
# scripts/spark.sh; BENCH_SPARK=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${BENCH_SPARK:-1}" != 0 ]; then
  source scripts/spark.sh
  spark_install >/dev/null
fi
records=${BENCH_RECORDS:-2000000}
tables=${BENCH_TABLES:-500}
rounds=${BENCH_ROUNDS:-20}
step=${BENCH_STEP:-10ms} # op_ts between records: 2,000,000 records span two dates
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/exporter" ./cmd/exporter
go build -o "$work/genstream" ./tools/genstream
go build -o "$work/duckq" ./tools/duckq
"$work/genstream" -records "$records" -tables "$tables" -columns 12 -ddl-every $((records / 4)) -step "$step" -out "$work/all.jsonl"
lines=$(wc -l <"$work/all.jsonl")
now() { date +%s.%N; }
catalog() { echo --sink "file://$1" --catalog sql --catalog-uri "sqlite://$1.db"; }

# The same stream in rounds: many small files.
lake="$work/lake"
for ((i = 1; i <= rounds; i++)); do
  head -n $((lines * i / rounds)) "$work/all.jsonl" >"$work/in.jsonl"
  "$work/exporter" run --source "file:$work/in.jsonl" $(catalog "$lake") --once --log-level warn --progress-every 0 >/dev/null
done

folders() { find "$lake" -path "$lake/_*" -prune -o -name '*.parquet' -print; }
stats() { folders | xargs stat -c %s | awk '{n++; b+=$1} END {printf "%d files, %.1f MB", n, b/1e6}'; }
scan() {
  local s e
  s=$(now)
  "$work/duckq" "SELECT count(*), sum(length(pos)), sum(hash(op_ts)) FROM read_parquet('$lake/*/*/*/*.parquet', union_by_name=true)" >/dev/null
  e=$(now)
  awk -v a="$s" -v b="$e" 'BEGIN {printf "%.2f s", b - a}'
}
spark_scan() {
  if [ -n "${EXPORTER_TEST_PYTHON:-}" ]; then "$EXPORTER_TEST_PYTHON" scripts/spark_scan.py "$lake" 2>/dev/null; else echo "not run"; fi
}
scan >/dev/null # warm the page cache
before=$(stats)
scan_before=$(scan)
spark_before=$(spark_scan)
# The lake as the rounds left it, to give every pass the same one (the
# catalog records the files' absolute paths: it is put back in place).
# sync: the copies' writeback would otherwise run during the timed runs.
cp -a "$lake" "$work/saved"
cp -a "$lake.db" "$work/saved.db"
sync
restore() {
  rm -rf "$lake" "$lake.db" "$lake.db-wal" "$lake.db-shm"
  cp -a "$work/saved" "$lake"
  cp -a "$work/saved.db" "$lake.db"
  sync
}

# BENCH_PAIRS (default 3) alternations of the exporter's run on the whole
# stream (one --once run into a new folder and catalog) and the passes
# over the lake of the rounds: a shared machine's speed drifts, and a
# ratio taken within a pair does not see it.
: >"$work/pairs"
for ((i = 1; i <= ${BENCH_PAIRS:-3}; i++)); do
  rm -rf "$work/one" "$work/one.db"
  t0=$(now)
  "$work/exporter" run --source "file:$work/all.jsonl" $(catalog "$work/one") --once --log-level warn --progress-every 0 >/dev/null
  t1=$(now)
  [ "$i" = 1 ] || restore
  t2=$(now)
  summary=$("$work/exporter" maintain $(catalog "$lake") --expire-after 0 --orphan-age 0 --log-level warn)
  t3=$(now)
  expiry=$("$work/exporter" maintain $(catalog "$lake") --expire-after 1ns --keep-snapshots 1 --orphan-age 0 --log-level warn)
  t4=$(now)
  echo "$summary"
  echo "$expiry"
  rows=$(awk '{for (i = 1; i <= NF; i++) if ($i == "rows,") print substr($(i-1), 2)}' <<<"$summary")
  awk -v r="$records" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v e="$t4" -v rows="$rows" -v i="$i" 'BEGIN {
    printf "pair %d: exporter %d records/s (%.1f s), compaction %d rows/s (%.1f s): %.2f; expiry %.1f s, both passes %.2f\n", i, r / (b - a), b - a, rows / (d - c), d - c,
      (rows / (d - c)) / (r / (b - a)), e - d, (rows / (e - c)) / (r / (b - a))
  }'
  echo "$t0 $t1 $t2 $t3 $rows $t4" >>"$work/pairs"
done
after=$(stats)
scan_after=$(scan)
spark_after=$(spark_scan)
awk -v s="$summary" -v bf="$before" -v af="$after" -v sb="$scan_before" -v sa="$scan_after" -v kb="$spark_before" -v ka="$spark_after" \
  -v recs="$records" -v tabs="$tables" -v rnds="$rounds" -v pf="$work/pairs" 'BEGIN {
  split(s, w, " ")
  for (i = 1; i <= length(w); i++) {
    if (w[i] == "rewritten") rewritten = w[i-2]
    if (w[i] == "→") { bb = w[i-1]; ba = w[i+1] }
  }
  n = 0
  while ((getline line < pf) > 0) {
    split(line, f, " ")
    n++; ex[n] = recs / (f[2] - f[1]); pt[n] = f[4] - f[3]; pr[n] = f[5] / pt[n]; ratio[n] = pr[n] / ex[n]
    et[n] = f[6] - f[4]; both[n] = (f[5] / (f[6] - f[3])) / ex[n]
  }
  median_of(ex, n); e = m
  median_of(pt, n); t = m
  median_of(pr, n); r = m
  median_of(ratio, n); q = m
  median_of(et, n); xt = m
  median_of(both, n); qb = m
  lo = ratio[1]; hi = ratio[1]
  for (i = 2; i <= n; i++) { if (ratio[i] < lo) lo = ratio[i]; if (ratio[i] > hi) hi = ratio[i] }
  printf "stream: %d records, %d tables, %d rounds\n", recs, tabs, rnds
  printf "tables folders before: %s; after: %s\n", bf, af
  printf "compaction (median of %d passes): %.1f s, %d files rewritten, %.1f MB/s (%.1f MB read, %.1f MB written), %d rows/s\n", n, t, rewritten, bb/1e6/t, bb/1e6, ba/1e6, r
  printf "exporter on the whole stream (median of %d runs): %d records/s; compaction rows/s : exporter records/s = %.2f by the pairs median (pairs %.2f to %.2f)\n", n, e, q, lo, hi
  printf "expiry of every older snapshot after it (median): %.1f s; compaction and expiry together: %.2f of the exporter records/s (pairs median)\n", xt, qb
  printf "DuckDB full scan of the folders: before %s, after %s\n", sb, sa
  printf "Spark full scan of the folders: before %s, after %s\n", kb, ka
}
function median_of(a, n,    i, j, t, b) {
  for (i = 1; i <= n; i++) b[i] = a[i]
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
  m = (n % 2) ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
}'
