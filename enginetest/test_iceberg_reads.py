"""Independent readers of the Iceberg tables `exporter run --catalog`
publishes: the golden GoldenGate stream (a DDL in the middle of each
table) exported with the hadoop catalog, read through the catalog by
Spark with iceberg-spark-runtime and from the current metadata file by
pyiceberg, gives every row DuckDB reads from the files, under the current
schema (the DDL's added column present, its dropped column gone), and the
data files carry the tables' field IDs.
"""

import subprocess
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import ROOT

TABLES = {
    # table: (a column the current schema has, one the DDL dropped or None)
    ("SALES", "ORDERS"): ("CUSTOMER_TIER", None),
    ("HR", "EMPLOYEES"): ("SALARY", "ACTIVE"),
}


@pytest.fixture(scope="module")
def iceberg_lake(exporter, tmp_path_factory):
    sink = tmp_path_factory.mktemp("iceberg") / "lake"
    subprocess.run(
        [exporter, "run", "--source", f"file:{ROOT / 'testdata/goldengate/sample.jsonl'}",
         "--sink", f"file://{sink}", "--once", "--catalog", "hadoop", "--log-level", "warn"],
        check=True, capture_output=True,
    )
    return sink


def glob_count(sink, ns, name):
    folder = sink / f"{ns}.{name}"
    return duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{folder}/**/*.parquet', union_by_name=true)"
    ).fetchone()[0]


def current_metadata(sink, ns, name):
    meta = sink / "_iceberg" / ns / name / "metadata"
    hint = (meta / "version-hint.text").read_text().strip()
    return str(meta / f"v{hint}.metadata.json")


@pytest.mark.parametrize("ident", list(TABLES), ids=lambda i: ".".join(i))
def test_pyiceberg_reads_the_tables(iceberg_lake, ident):
    from pyiceberg.table import StaticTable

    has, dropped = TABLES[ident]
    tbl = StaticTable.from_metadata(current_metadata(iceberg_lake, *ident))
    names = [f.name for f in tbl.schema().fields]
    assert has in names
    assert dropped is None or dropped not in names
    rows = tbl.scan().to_arrow()
    assert rows.num_rows == glob_count(iceberg_lake, *ident) == 6
    for task in tbl.scan().plan_files():
        schema = pq.read_schema(task.file.file_path.removeprefix("file://"))
        for field in schema:
            assert field.metadata and b"PARQUET:field_id" in field.metadata, (task.file.file_path, field.name)


@pytest.mark.parametrize("ident", list(TABLES), ids=lambda i: ".".join(i))
def test_spark_reads_the_tables_through_the_catalog(spark, iceberg_lake, ident):
    import os

    if not os.environ.get("EXPORTER_TEST_ICEBERG_JAR"):
        pytest.skip("EXPORTER_TEST_ICEBERG_JAR is not set (scripts/spark.sh sets it)")
    spark.conf.set("spark.sql.catalog.lakehouse", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set("spark.sql.catalog.lakehouse.type", "hadoop")
    spark.conf.set("spark.sql.catalog.lakehouse.warehouse", f"file://{iceberg_lake}/_iceberg")
    has, dropped = TABLES[ident]
    name = "lakehouse." + ".".join(ident)
    df = spark.table(name)
    assert has in df.columns
    assert dropped is None or dropped not in df.columns
    assert df.count() == glob_count(iceberg_lake, *ident) == 6
    # Partition pruning on day(op_ts): a filter on op_ts reads the rows
    # of its days only, and the same rows as filtering afterwards.
    day = "2026-07-14"
    pruned = spark.sql(f"SELECT pos FROM {name} WHERE op_ts >= TIMESTAMP '{day} 00:00:00'").collect()
    everything = [r for r in spark.table(name).collect() if r.op_ts.strftime("%Y-%m-%d") >= day]
    assert sorted(r.pos for r in pruned) == sorted(r.pos for r in everything)


def test_spark_runs_the_printed_catalog_views(spark, exporter, iceberg_lake):
    """`exporter views --dialect spark` with the catalog flags prints the
    glob views, the catalog's settings as SET statements and a view per
    table over lakehouse.NS.TABLE: Spark runs all of it as printed, and
    the catalog views hold the rows the files hold."""
    import os

    if not os.environ.get("EXPORTER_TEST_ICEBERG_JAR"):
        pytest.skip("EXPORTER_TEST_ICEBERG_JAR is not set (scripts/spark.sh sets it)")
    out = subprocess.run(
        [exporter, "views", "--sink", f"file://{iceberg_lake}", "--dialect", "spark", "--catalog", "hadoop"],
        check=True, capture_output=True, text=True,
    ).stdout
    assert "SET spark.sql.catalog.lakehouse.type=hadoop;" in out
    body = "\n".join(line for line in out.splitlines() if not line.startswith("--"))
    for stmt in (s.strip() for s in body.split(";\n")):
        if stmt.rstrip(";"):
            spark.sql(stmt.rstrip(";"))
    for ident, (has, dropped) in TABLES.items():
        view = "`" + ".".join(ident) + "__iceberg`"
        df = spark.table(view)
        assert has in df.columns
        assert dropped is None or dropped not in df.columns
        assert df.count() == glob_count(iceberg_lake, *ident) == 6


RENAME_STREAM = "\n".join([
    '{"op_type":"OBJECT_METADATA","qual_table":"S.R","columns":{"ID":{"type":"number","null":false,"key":true},"A":{"type":"string","null":true,"key":false}}}',
    '{"qual_table":"S.R","op_type":"INSERT","op_ts":"2026-07-13T01:00:00Z","pos":"1","after":{"ID":1,"A":"one"}}',
    '{"op_type":"DDL","op_ts":"2026-07-13T02:00:00Z","pos":"2","ddl":{"object":{"catalog":"","schema":"S","object":"R"},"statement":"ALTER TABLE S.R RENAME COLUMN A TO B"}}',
    '{"qual_table":"S.R","op_type":"INSERT","op_ts":"2026-07-13T03:00:00Z","pos":"3","after":{"ID":2,"B":"two"}}',
]) + "\n"


def test_renamed_column_reads_its_older_values(spark, exporter, tmp_path):
    """A column a DDL statement renames keeps its Iceberg field ID:
    pyiceberg and Spark, reading through the table, find the values
    written before the rename under the new name."""
    import os

    from pyiceberg.table import StaticTable

    stream = tmp_path / "rename.jsonl"
    stream.write_text(RENAME_STREAM)
    sink = tmp_path / "lake"
    subprocess.run(
        [exporter, "run", "--source", f"file:{stream}", "--sink", f"file://{sink}", "--once",
         "--catalog", "hadoop", "--log-level", "warn"],
        check=True, capture_output=True,
    )
    want = [(1, "one"), (2, "two")]
    tbl = StaticTable.from_metadata(current_metadata(sink, "S", "R"))
    assert "A" not in [f.name for f in tbl.schema().fields]
    got = tbl.scan(selected_fields=("ID", "B")).to_arrow().sort_by("ID").to_pylist()
    assert [(int(r["ID"]), r["B"]) for r in got] == want
    if not os.environ.get("EXPORTER_TEST_ICEBERG_JAR"):
        pytest.skip("EXPORTER_TEST_ICEBERG_JAR is not set (scripts/spark.sh sets it)")
    spark.conf.set("spark.sql.catalog.renamed", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set("spark.sql.catalog.renamed.type", "hadoop")
    spark.conf.set("spark.sql.catalog.renamed.warehouse", f"file://{sink}/_iceberg")
    rows = spark.sql("SELECT ID, B FROM renamed.S.R ORDER BY ID").collect()
    assert [(int(r.ID), r.B) for r in rows] == want
