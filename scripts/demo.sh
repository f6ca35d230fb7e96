#!/usr/bin/env bash
# Exports the bundled sample stream into ./lake and queries it with DuckDB.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf lake
go run ./cmd/exporter run --source file:testdata/goldengate/sample.jsonl --sink file://./lake --once --log-format text
echo
echo "== files =="
find lake -type f | sort
echo
echo "== DuckDB: rows per table, schema version and op =="
go run ./tools/duckq "
  SELECT split_part(filename, '/', 2) AS qual_table, schema_version, op_type, count(*) AS n_rows
  FROM read_parquet('lake/*/*/*/*.parquet', hive_partitioning=true, union_by_name=true, filename=true)
  GROUP BY ALL ORDER BY ALL"
echo
echo "== DuckDB: SALES.ORDERS across both schema versions =="
go run ./tools/duckq "
  SELECT op_type, op_ts, ORDER_ID, STATUS, TOTAL_AMOUNT, CUSTOMER_TIER, absent_columns, schema_version, dt::VARCHAR AS dt
  FROM read_parquet('lake/SALES.ORDERS/*/*/*.parquet', hive_partitioning=true, union_by_name=true)
  ORDER BY op_ts"
