#!/usr/bin/env bash
# Exports the bundled sample stream into ./lake and queries it with DuckDB.
# With --iceberg: exports it as Iceberg tables of the hadoop catalog (the
# metadata in ./lake/_iceberg, no server) and reads them back through the
# catalog with the exporter itself (iceberg-go's table scan); nothing is
# downloaded at query time. cmd/exporter's TestDemoIcebergCommands runs the
# same commands.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf lake
if [ "${1:-}" = "--iceberg" ]; then
  go run ./cmd/exporter run --source file:testdata/goldengate/sample.jsonl --sink file://./lake --once --catalog hadoop --log-format text
  echo
  echo "== the tables, and their Iceberg snapshots in the hadoop catalog =="
  go run ./cmd/exporter tables --sink file://./lake --catalog hadoop
  echo
  echo "== SALES.ORDERS read through the catalog: every change, across both schema versions =="
  go run ./cmd/exporter scan SALES.ORDERS --sink file://./lake --catalog hadoop --columns op_type,op_ts,ORDER_ID,STATUS,CUSTOMER_TIER
  echo
  echo "Spark: go run ./cmd/exporter views --sink file://./lake --catalog hadoop --dialect spark prints its catalog settings and views."
  exit 0
fi
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
