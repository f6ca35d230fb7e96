"""Read one table of the lakehouse-exporter lake with PySpark.

Layout written by the exporter:

    {sink}/{table}/schema_version={N}/dt={YYYY-MM-DD}/part-*.parquet
    (with --partition-by hour: .../dt={YYYY-MM-DD}/hr={HH}/part-*.parquet)

Columns of a data file, in order: op_type, op_ts (timestamp, UTC, µs), xid,
pos, the table's columns, absent_columns (list of the columns a partial
image did not carry), src_partition, src_offset (int64), for Qlik also
change_seq, txn_event_counter, txn_last_event, changed_columns, and
before_image (struct).

The script reads every schema version of the table at once (mergeSchema:
a column added by a later version is null in the earlier ones), prints the
change history, and computes the current state: per key, the latest change
by (op_ts, src_partition, src_offset), keys whose latest change is a DELETE
dropped. Columns a partial image left out (absent_columns) are filled from
the latest earlier change that carried them, so an update that only sent
the changed columns does not null out the rest. An UPDATE that changed the
key ends the old key, as a DELETE of it would.

    spark-submit deploy/spark/read_lake.py --lake lake --table SALES.ORDERS --key ORDER_ID
    spark-submit --packages org.apache.hadoop:hadoop-aws:3.3.4 deploy/spark/read_lake.py \
        --lake s3a://lake/goldengate --table SALES.ORDERS --key ORDER_ID

64-bit integer and timestamp columns are DELTA_BINARY_PACKED, which Spark's
vectorized reader reads from 3.3 on; for an older Spark, run the exporter
with --int-encoding plain or set spark.sql.parquet.enableVectorizedReader=false.

For MinIO add --conf spark.hadoop.fs.s3a.endpoint=http://localhost:9000
--conf spark.hadoop.fs.s3a.path.style.access=true (credentials from the
usual AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY).

Table folders escape bytes outside [A-Za-z0-9_-.$#] as %XX (SALES.ORDERS
stays as is); pass the folder name as it appears in storage.
"""

import argparse

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

# Columns the exporter adds around the table's own columns.
META_COLUMNS = {
    "op_type",
    "op_ts",
    "xid",
    "pos",
    "absent_columns",
    "src_partition",
    "src_offset",
    "change_seq",
    "txn_event_counter",
    "txn_last_event",
    "changed_columns",
    "before_image",
    # hive partitions
    "schema_version",
    "dt",
    "hr",
}


def read_table(spark: SparkSession, lake: str, table: str) -> DataFrame:
    """Every change of one table, across schema versions and days."""
    path = f"{lake.rstrip('/')}/{table}"
    return (
        spark.read.option("mergeSchema", "true")
        # schema_version=N/dt=YYYY-MM-DD become columns (int, date)
        .option("basePath", path)
        .parquet(path)
    )


def with_key_changes(changes: DataFrame, keys: list[str]) -> DataFrame:
    """The changes plus a DELETE of the old key for every UPDATE that changed
    the key (its before image names the old key), before_image dropped."""
    if "before_image" not in changes.columns:  # written with --no-before-image
        return changes
    before = [F.col("before_image").getField(k) for k in keys]
    has_old_key = F.col("op_type") == "UPDATE"
    key_changed = F.lit(False)
    for k, b in zip(keys, before):
        has_old_key = has_old_key & b.isNotNull()
        key_changed = key_changed | ~b.eqNullSafe(F.col(k))
    old_keys = changes.where(has_old_key & key_changed).select(
        *[b.alias(k) for k, b in zip(keys, before)],
        F.lit("DELETE").alias("op_type"),
        "op_ts",
        "src_partition",
        "src_offset",
    )
    return changes.drop("before_image").unionByName(old_keys, allowMissingColumns=True)


def current_state(changes: DataFrame, keys: list[str]) -> DataFrame:
    """The latest image per key, DELETEs (and old keys of key-changing
    UPDATEs) dropped, absent columns filled."""
    changes = with_key_changes(changes, keys)
    data_columns = [c for c in changes.columns if c not in META_COLUMNS and c not in keys]
    absent = F.coalesce(F.col("absent_columns"), F.array().cast("array<string>"))

    # Oldest to newest, over the whole history of the key.
    history = (
        Window.partitionBy(*keys)
        .orderBy("op_ts", "src_partition", "src_offset")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    # A column a partial image did not carry takes its latest value from an
    # earlier change that carried it. Wrapping the value in a struct keeps
    # an explicit null apart from "not sent" (which ignorenulls skips).
    filled = changes.select(
        *keys,
        "op_type",
        "op_ts",
        "src_partition",
        "src_offset",
        "schema_version",
        *[
            F.last(
                F.when(~F.array_contains(absent, c), F.struct(F.col(c).alias("v"))),
                ignorenulls=True,
            )
            .over(history)
            .getField("v")
            .alias(c)
            for c in data_columns
        ],
    )

    newest_first = Window.partitionBy(*keys).orderBy(
        F.col("op_ts").desc(), F.col("src_partition").desc(), F.col("src_offset").desc()
    )
    return (
        filled.withColumn("_rank", F.row_number().over(newest_first))
        .where((F.col("_rank") == 1) & (F.col("op_type") != "DELETE"))
        .drop("_rank")
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lake", default="lake", help="the exporter's --sink, as a Spark path (lake, s3a://bucket/prefix)")
    ap.add_argument("--table", default="SALES.ORDERS", help="table folder, e.g. SALES.ORDERS")
    ap.add_argument("--key", default="ORDER_ID", help="key column(s), comma-separated")
    args = ap.parse_args()
    keys = [k.strip() for k in args.key.split(",") if k.strip()]

    spark = (
        SparkSession.builder.appName("read-lake")
        # op_ts is a UTC instant; show it in UTC
        .config("spark.sql.session.timeZone", "UTC")
        # Dates and timestamps are proleptic Gregorian (as in DuckDB and
        # Arrow). Spark 3.x, seeing a file not written by Spark, refuses
        # values before 1582-10-15 (Oracle's 0001-01-01 sentinels, say)
        # unless told to read them as they are; Spark 4 does by default.
        .config("spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED")
        .getOrCreate()
    )
    changes = read_table(spark, args.lake, args.table)
    changes.printSchema()

    print("changes per schema version and day")
    changes.groupBy("schema_version", "dt", "op_type").count().orderBy("schema_version", "dt", "op_type").show()

    print("history")
    changes.drop("before_image").orderBy("op_ts", "src_partition", "src_offset").show(truncate=False)

    print("current state")
    current_state(changes, keys).orderBy(*keys).show(truncate=False)

    # The same in Spark SQL (latest row per key, without filling absent
    # columns), over the changes plus the old keys of key-changing UPDATEs:
    with_key_changes(changes, keys).createOrReplaceTempView("changes")
    key_list = ", ".join(f"`{k}`" for k in keys)
    spark.sql(
        f"""
        SELECT * FROM (
          SELECT *, row_number() OVER (
                   PARTITION BY {key_list}
                   ORDER BY op_ts DESC, src_partition DESC, src_offset DESC) AS rn
          FROM changes)
        WHERE rn = 1 AND op_type <> 'DELETE'
        ORDER BY {key_list}
        """
    ).drop("rn").show(truncate=False)

    spark.stop()


if __name__ == "__main__":
    main()
