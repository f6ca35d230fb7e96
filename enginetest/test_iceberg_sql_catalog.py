"""Readers of the SQL catalog the exporter writes with --catalog sql:
pyiceberg's SqlCatalog on the SQLite file, and Spark's JDBC catalog on
PostgreSQL, configured with the settings `exporter views --dialect spark`
prints. Both read, through the catalog, every row the files hold, under
the current schema."""

import os
import subprocess
import uuid

import duckdb
import pytest

from conftest import ROOT

SAMPLE = f"file:{ROOT / 'testdata/goldengate/sample.jsonl'}"
TABLES = {
    # source table: (a column the current schema has, one the DDL dropped or None)
    "SALES.ORDERS": ("CUSTOMER_TIER", None),
    "HR.EMPLOYEES": ("SALARY", "ACTIVE"),
}


def glob_count(sink, table):
    return duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{sink / table}/**/*.parquet', union_by_name=true)"
    ).fetchone()[0]


def export(exporter, sink, *catalog):
    subprocess.run(
        [exporter, "run", "--source", SAMPLE, "--sink", f"file://{sink}", "--once", "--log-level", "warn", *catalog],
        check=True, capture_output=True,
    )


def test_pyiceberg_reads_the_sqlite_catalog(exporter, tmp_path):
    pytest.importorskip("sqlalchemy")
    from pyiceberg.catalog.sql import SqlCatalog

    sink, db = tmp_path / "lake", tmp_path / "catalog.db"
    export(exporter, sink, "--catalog", "sql", "--catalog-uri", f"sqlite://{db}")
    # The catalog's name is the one the exporter stores in every row.
    catalog = SqlCatalog("lakehouse", uri=f"sqlite:///{db}", warehouse=f"file://{sink}/_iceberg")
    assert sorted(catalog.list_namespaces()) == [("HR",), ("SALES",)]
    for table, (has, dropped) in TABLES.items():
        tbl = catalog.load_table(table)
        names = [f.name for f in tbl.schema().fields]
        assert has in names
        assert dropped is None or dropped not in names
        assert tbl.scan().to_arrow().num_rows == glob_count(sink, table) == 6


def test_spark_jdbc_catalog_reads_postgres(spark, exporter, tmp_path):
    dsn = os.environ.get("EXPORTER_TEST_POSTGRES_DSN")
    if not dsn:
        pytest.skip("EXPORTER_TEST_POSTGRES_DSN is not set (scripts/postgres.sh sets it)")
    if not (os.environ.get("EXPORTER_TEST_ICEBERG_JAR") and os.path.exists(os.environ.get("EXPORTER_TEST_POSTGRES_JAR", ""))):
        pytest.skip("the Iceberg runtime or PostgreSQL's JDBC driver is missing (scripts/spark.sh fetches both)")
    sink = tmp_path / "lake"
    # A namespace of its own: the database outlives the test, and the
    # session's lakehouse catalog may hold other tests' tables.
    ns = "enginetest_" + uuid.uuid4().hex[:12]
    catalog = ["--catalog", "sql", "--catalog-uri", dsn, "--catalog-namespace", ns]
    export(exporter, sink, *catalog)
    out = subprocess.run(
        [exporter, "views", "--sink", f"file://{sink}", "--dialect", "spark", *catalog],
        check=True, capture_output=True, text=True,
    ).stdout
    assert "SET spark.sql.catalog.lakehouse.type=jdbc;" in out
    # The JDBC catalog sees the rows of its own name, lakehouse; the
    # session may have configured a lakehouse catalog already (a Spark
    # catalog is set up once, at its first use), a new session has none.
    session = spark.newSession()
    body = "\n".join(line for line in out.splitlines() if not line.startswith("--"))
    for stmt in (s.strip() for s in body.split(";\n")):
        if stmt.rstrip(";"):
            session.sql(stmt.rstrip(";"))
    for table, (has, dropped) in TABLES.items():
        assert f"`lakehouse`.`{ns}`.`{table.replace('.', '_')}`" in out
        df = session.table(f"`{table}__iceberg`")
        assert has in df.columns
        assert dropped is None or dropped not in df.columns
        assert df.count() == glob_count(sink, table) == 6
