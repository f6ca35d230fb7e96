"""Times a full scan of every data file of a lake with Spark, as
scripts/bench-maintain.sh times it with DuckDB: the files under
LAKE/*/*/*/*.parquet, read with the metacolumns' schema only (the tables'
own columns differ), counted and summed. Prints the seconds of the second
scan (the first warms the page cache and Spark's JIT)."""
import sys
import time

from pyspark.sql import SparkSession, functions as F

lake = sys.argv[1]
spark = (SparkSession.builder.master("local[2]").appName("bench-maintain-scan")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")


def scan():
    df = spark.read.schema("op_ts TIMESTAMP, pos STRING").parquet(f"{lake}/*/*/*/*.parquet")
    return df.agg(F.count(F.lit(1)), F.sum(F.length("pos")), F.count("op_ts")).collect()[0]


first = scan()
start = time.perf_counter()
second = scan()
elapsed = time.perf_counter() - start
assert first == second, (first, second)
print(f"{elapsed:.2f} s ({second[0]} rows)")
