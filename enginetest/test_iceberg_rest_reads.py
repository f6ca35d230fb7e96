"""Independent readers of the Iceberg tables `exporter run --catalog rest`
publishes to Iceberg's REST catalog test server (scripts/restcatalog.sh):
the golden GoldenGate stream (a DDL in the middle of each table), read
through the same server by pyiceberg's REST catalog and by Spark's
(iceberg-spark-runtime), gives every row DuckDB reads from the files,
under the current schema (the DDL's added column present, its dropped
column gone). Skipped when EXPORTER_TEST_REST_URI is not set.
"""

import os
import subprocess
import time

import duckdb
import pytest

from conftest import ROOT

TABLES = {
    # source table: (a column the current schema has, one the DDL dropped or None)
    "SALES.ORDERS": ("CUSTOMER_TIER", None),
    "HR.EMPLOYEES": ("SALARY", "ACTIVE"),
}


@pytest.fixture(scope="module")
def rest_lake(exporter, tmp_path_factory):
    """The sink and the namespace of the sample exported through the REST
    catalog: a namespace of this run's own, since the server outlives the
    tests and keeps its tables."""
    uri = os.environ.get("EXPORTER_TEST_REST_URI")
    if not uri:
        pytest.skip("EXPORTER_TEST_REST_URI is not set (source scripts/restcatalog.sh and run restcatalog_start)")
    namespace = f"exporter_engine_{time.time_ns()}"
    sink = tmp_path_factory.mktemp("iceberg_rest") / "lake"
    subprocess.run(
        [exporter, "run", "--source", f"file:{ROOT / 'testdata/goldengate/sample.jsonl'}",
         "--sink", f"file://{sink}", "--once", "--catalog", "rest", "--catalog-uri", uri,
         "--catalog-namespace", namespace, "--log-level", "warn"],
        check=True, capture_output=True,
    )
    return uri, sink, namespace


def glob_count(sink, table):
    return duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{sink / table}/**/*.parquet', union_by_name=true)"
    ).fetchone()[0]


@pytest.mark.parametrize("table", list(TABLES))
def test_pyiceberg_reads_through_the_rest_catalog(rest_lake, table):
    from pyiceberg.catalog import load_catalog

    uri, sink, namespace = rest_lake
    catalog = load_catalog("rest", type="rest", uri=uri)
    # --catalog-namespace names each table after its whole source name.
    tbl = catalog.load_table((namespace, table.replace(".", "_")))
    has, dropped = TABLES[table]
    names = [f.name for f in tbl.schema().fields]
    assert has in names
    assert dropped is None or dropped not in names
    assert tbl.scan().to_arrow().num_rows == glob_count(sink, table) == 6


@pytest.mark.parametrize("table", list(TABLES))
def test_spark_reads_through_the_rest_catalog(spark, rest_lake, table):
    if not os.environ.get("EXPORTER_TEST_ICEBERG_JAR"):
        pytest.skip("EXPORTER_TEST_ICEBERG_JAR is not set (scripts/spark.sh sets it)")
    uri, sink, namespace = rest_lake
    # A catalog name of its own: Spark keeps a catalog once it is used,
    # and the other Iceberg tests use theirs with the hadoop catalog.
    spark.conf.set("spark.sql.catalog.restlake", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set("spark.sql.catalog.restlake.type", "rest")
    spark.conf.set("spark.sql.catalog.restlake.uri", uri)
    has, dropped = TABLES[table]
    df = spark.table(f"restlake.{namespace}.{table.replace('.', '_')}")
    assert has in df.columns
    assert dropped is None or dropped not in df.columns
    assert df.count() == glob_count(sink, table) == 6
