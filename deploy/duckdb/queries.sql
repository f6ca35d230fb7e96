-- DuckDB queries over the lake that lakehouse-exporter writes: the same
-- reads as deploy/spark/read_lake.py.
--
-- Layout: {sink}/{table}/schema_version={N}/dt={YYYY-MM-DD}/part-*.parquet
-- (with --partition-by hour, one more level: hr={HH}). Columns of a data
-- file: op_type, op_ts (timestamp with time zone, µs), xid, pos, the
-- table's columns, absent_columns (list of the columns a partial image did
-- not carry), src_partition, src_offset (bigint), for Qlik also
-- change_seq, txn_event_counter, txn_last_event, changed_columns, and
-- before_image (struct).
--
-- hive_partitioning turns schema_version and dt into columns (and prunes
-- files on them); union_by_name lines up the columns of every schema
-- version by name (a column added by version 2 is NULL in version 1 rows).
--
-- Run from the folder that holds ./lake (the exporter's default sink):
--   duckdb < deploy/duckdb/queries.sql
-- deploy/deploy_test.go runs every statement of this file against a lake
-- exported from testdata/ and checks the results of the named ones.

SET TimeZone = 'UTC';

-- Where the lake is. A local folder:
SET VARIABLE lake = 'lake';

-- Or S3 / MinIO (needs the httpfs extension; DuckDB downloads it once):
--   INSTALL httpfs;
--   LOAD httpfs;
--   CREATE SECRET lake_s3 (TYPE s3, PROVIDER credential_chain, REGION 'eu-west-1');
--   -- MinIO instead:
--   -- CREATE SECRET lake_s3 (TYPE s3, KEY_ID 'minioadmin', SECRET 'minioadmin',
--   --   ENDPOINT 'localhost:9000', URL_STYLE 'path', USE_SSL false, REGION 'us-east-1');
--   SET VARIABLE lake = 's3://lake/goldengate';

-- Every change of SALES.ORDERS, all schema versions and days. ** matches
-- dt=.../ as well as dt=.../hr=.../.
CREATE OR REPLACE VIEW orders_changes AS
SELECT *
FROM read_parquet(getvariable('lake') || '/SALES.ORDERS/**/*.parquet',
                  hive_partitioning = true, union_by_name = true);

-- name: orders_versions
-- What is there: changes per schema version, day and operation.
SELECT schema_version, dt, op_type, count(*) AS changes
FROM orders_changes
GROUP BY ALL
ORDER BY ALL;

-- name: orders_history
-- The history in stream order. op_ts orders the changes; within the same
-- op_ts, the source position (Kafka topic-partition and offset, or input
-- file and line) does.
SELECT op_type, op_ts, ORDER_ID, STATUS, TOTAL_AMOUNT, CUSTOMER_TIER,
       absent_columns, schema_version, dt, src_partition, src_offset
FROM orders_changes
ORDER BY op_ts, src_partition, src_offset;

-- name: orders_one_day
-- A filter on dt only reads that day's files.
SELECT op_type, op_ts, ORDER_ID, STATUS
FROM orders_changes
WHERE dt = DATE '2026-07-14'
ORDER BY op_ts, src_partition, src_offset;

-- name: orders_current
-- Current state: the latest change per key; a key whose latest change is a
-- DELETE is gone, and so is the old key of an UPDATE that changed the key
-- (its before image names the old key: that counts as a DELETE of it).
-- Exact when every change carries a full image; see customers_current for
-- partial images.
SELECT * EXCLUDE (rn)
FROM (
  SELECT *,
         row_number() OVER (PARTITION BY ORDER_ID
                            ORDER BY op_ts DESC, src_partition DESC, src_offset DESC) AS rn
  FROM (
    SELECT * EXCLUDE (before_image) FROM orders_changes
    UNION ALL BY NAME
    SELECT before_image.ORDER_ID AS ORDER_ID, 'DELETE' AS op_type, op_ts, src_partition, src_offset
    FROM orders_changes
    WHERE op_type = 'UPDATE' AND before_image.ORDER_ID IS NOT NULL
      AND before_image.ORDER_ID IS DISTINCT FROM ORDER_ID
  )
)
WHERE rn = 1 AND op_type <> 'DELETE'
ORDER BY ORDER_ID;

-- Current state with partial images. A column named in absent_columns was
-- not sent (GoldenGate without full supplemental logging, Qlik's
-- columnMask): it is NULL in its own column but is not a NULL value. Take
-- each column from the latest change that carried it. sent() wraps a
-- carried value in a struct, so that an explicit NULL survives IGNORE
-- NULLS while a column that was not sent is skipped.
CREATE OR REPLACE MACRO sent(absent, col, val) AS
  CASE WHEN list_contains(coalesce(absent, []), col) THEN NULL ELSE {'v': val} END;

-- A Qlik table (SALES.CUSTOMERS in testdata/qlik/sample.jsonl). For Qlik,
-- change_seq orders the changes too; op_ts, src_partition, src_offset
-- gives the same order here.
CREATE OR REPLACE VIEW customers_changes AS
SELECT *
FROM read_parquet(getvariable('lake') || '/SALES.CUSTOMERS/**/*.parquet',
                  hive_partitioning = true, union_by_name = true);

-- name: customers_current
WITH filled AS (
  SELECT ID, op_type, op_ts, src_partition, src_offset, schema_version,
         last_value(sent(absent_columns, 'NAME', NAME) IGNORE NULLS) OVER w AS NAME,
         last_value(sent(absent_columns, 'BALANCE', BALANCE) IGNORE NULLS) OVER w AS BALANCE,
         last_value(sent(absent_columns, 'BIG', BIG) IGNORE NULLS) OVER w AS BIG,
         last_value(sent(absent_columns, 'CREATED', CREATED) IGNORE NULLS) OVER w AS CREATED,
         last_value(sent(absent_columns, 'BIRTH', BIRTH) IGNORE NULLS) OVER w AS BIRTH,
         last_value(sent(absent_columns, 'ACTIVE', ACTIVE) IGNORE NULLS) OVER w AS ACTIVE,
         last_value(sent(absent_columns, 'NOTE', NOTE) IGNORE NULLS) OVER w AS NOTE,
         last_value(sent(absent_columns, 'TIER', TIER) IGNORE NULLS) OVER w AS TIER,
         row_number() OVER (PARTITION BY ID
                            ORDER BY op_ts DESC, src_partition DESC, src_offset DESC) AS rn
  FROM (
    SELECT * EXCLUDE (before_image) FROM customers_changes
    UNION ALL BY NAME
    -- the old key of a key-changing UPDATE is gone, as in orders_current
    SELECT before_image.ID AS ID, 'DELETE' AS op_type, op_ts, src_partition, src_offset
    FROM customers_changes
    WHERE op_type = 'UPDATE' AND before_image.ID IS NOT NULL
      AND before_image.ID IS DISTINCT FROM ID
  )
  WINDOW w AS (PARTITION BY ID ORDER BY op_ts, src_partition, src_offset
               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
SELECT f.ID, f.op_type, f.op_ts,
       f.NAME.v AS NAME, f.BALANCE.v AS BALANCE, f.BIG.v AS BIG, f.CREATED.v AS CREATED,
       f.BIRTH.v AS BIRTH, f.ACTIVE.v AS ACTIVE, f.NOTE.v AS NOTE, f.TIER.v AS TIER,
       f.schema_version
FROM filled AS f
WHERE f.rn = 1 AND f.op_type <> 'DELETE'
ORDER BY f.ID;

-- name: schema_versions
-- Tables, schema versions and days, from the object names alone (glob reads
-- no file).
SELECT regexp_extract(file, '([^/]+)/schema_version=[0-9]+/', 1) AS table_folder,
       CAST(regexp_extract(file, '/schema_version=([0-9]+)/', 1) AS INTEGER) AS schema_version,
       min(regexp_extract(file, '/dt=([0-9-]+)/', 1)) AS first_day,
       max(regexp_extract(file, '/dt=([0-9-]+)/', 1)) AS last_day,
       count(*) AS files
FROM glob(getvariable('lake') || '/*/schema_version=*/**/*.parquet')
GROUP BY ALL
ORDER BY ALL;

-- Rejected records (only when there are some: DuckDB fails on a glob that
-- matches no file):
--   SELECT * FROM read_json_auto(getvariable('lake') || '/_dlq/**/*.jsonl');
