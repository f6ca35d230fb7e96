"""Spark reads every lake the exporter writes, as the README tells users to:
for each golden stream, both --int-encoding values and both Parquet
encoders, every table read with spark.read.option("mergeSchema", "true")
holds the same columns, types and rows as DuckDB's reading of the same
files, and the current-state views of `exporter views --dialect spark`
hold what DuckDB's current-state views hold.
"""

import datetime
import decimal
import math
import subprocess
from pathlib import Path

import duckdb
import pytest

from conftest import ROOT

HERE = Path(__file__).resolve().parent

EDGE_HINTS = ";".join(
    f"EDGE.TYPES:{col}={typ}"
    for col, typ in [
        ("ID", "int64"),
        ("AMOUNT", "decimal(38,9)"),
        ("PRICE", "decimal(18,2)"),
        ("BORN", "date"),
        ("SEEN_AT", "timestamp"),
        ("PAYLOAD", "binary"),
        ("RATIO", "float64"),
        ("COUNT", "int64"),
    ]
)

# name: (input files, extra flags)
STREAMS = {
    # GoldenGate, with DDL in the middle (two schema versions per table),
    # a CloudEvents-wrapped partial update and a day boundary.
    "goldengate": ([ROOT / "testdata/goldengate/sample.jsonl"], []),
    # Qlik Replicate: decimals, a pre-1900 date, a uint64 beyond int64.
    "qlik": ([ROOT / "testdata/qlik/sample.jsonl"], []),
    # Every type a hint can give, at its edges, a column name with a
    # space, before images, a key change and partial images.
    "edge_types": ([HERE / "testdata/edge_types.jsonl"], ["--type-hint", EDGE_HINTS]),
    # Partial images only: absent_columns decides the current state.
    "partial": ([HERE / "testdata/partial.jsonl"], []),
    # The key column renamed by a DDL: older rows keep their keys.
    "key_rename": ([HERE / "testdata/key_rename.jsonl"], []),
}

SETTINGS = [(enc, pq) for enc in ("delta", "plain") for pq in ("lean", "arrow")]

# The Spark types of the edge stream's columns, written out by hand, so
# that the check does not rest on DuckDB alone.
EDGE_TYPES = {
    "op_type": "string",
    "op_ts": "timestamp",
    "ID": "bigint",
    "AMOUNT": "decimal(38,9)",
    "PRICE": "decimal(18,2)",
    "BORN": "date",
    "SEEN_AT": "timestamp",
    "PAYLOAD": "binary",
    "NOTE TEXT": "string",
    "RATIO": "double",
    "FLAG": "boolean",
    "COUNT": "bigint",
    "absent_columns": "array<string>",
    "schema_version": "int",
    "dt": "date",
}


@pytest.fixture(scope="session", params=[(s, enc, pq) for s in STREAMS for enc, pq in SETTINGS],
                ids=lambda p: "-".join(p))
def lake(request, exporter, tmp_path_factory):
    stream, int_encoding, encoder = request.param
    files, extra = STREAMS[stream]
    out = tmp_path_factory.mktemp(f"lake-{stream}-{int_encoding}-{encoder}")
    subprocess.run(
        [exporter, "run", "--source", "file:" + ",".join(str(f) for f in files), "--sink", f"file://{out}",
         "--int-encoding", int_encoding, "--parquet-encoder", encoder, "--max-rejects", "0", "--log-level", "warn",
         *extra],
        check=True, stdout=subprocess.DEVNULL)
    tables = sorted(d for d in out.iterdir() if d.is_dir() and not d.name.startswith("_"))
    assert tables, f"the exporter wrote no table from {stream}"
    return {"stream": stream, "dir": out, "tables": tables}


def duck():
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con


def duck_table(con, table_dir):
    return con.sql(f"SELECT * FROM read_parquet('{table_dir}/*/*/*.parquet', hive_partitioning = true, union_by_name = true)")


def spark_type_of_duck(t):
    """The Spark type (simpleString) that a DuckDB type reads as."""
    simple = {
        "varchar": "string", "bigint": "bigint", "integer": "int", "double": "double", "float": "float",
        "boolean": "boolean", "date": "date", "timestamp with time zone": "timestamp",
        "timestamp": "timestamp_ntz", "blob": "binary", "smallint": "smallint", "tinyint": "tinyint",
    }
    if t.id in simple:
        return simple[t.id]
    children = dict(t.children) if t.id != "struct" else None
    if t.id == "decimal":
        return f"decimal({children['precision']},{children['scale']})"
    if t.id == "list":
        return f"array<{spark_type_of_duck(children['child'])}>"
    if t.id == "struct":
        return "struct<" + ",".join(f"{n}:{spark_type_of_duck(c)}" for n, c in t.children) + ">"
    raise AssertionError(f"no Spark type known for DuckDB type {t}")


def norm(v):
    """One value as both engines' Python values compare: UTC naive
    datetimes, bytes, dicts for structs, NaN as a word."""
    if v is None:
        return None
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return ("ts", v.isoformat())
    if isinstance(v, (bytes, bytearray, memoryview)):
        return ("bin", bytes(v).hex())
    if isinstance(v, decimal.Decimal):
        return ("dec", str(v))
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if hasattr(v, "asDict"):
        v = v.asDict(recursive=False)
    if isinstance(v, dict):
        return tuple(sorted((k, norm(x)) for k, x in v.items()))
    if isinstance(v, list):
        return tuple(norm(x) for x in v)
    return v


def rows_of(columns, rows):
    """Rows as sorted tuples of (column, value), in a stable order."""
    return sorted((tuple(sorted(zip(columns, (norm(v) for v in r)))) for r in rows), key=repr)


def test_spark_reads_every_table_as_duckdb_does(spark, lake):
    con = duck()
    for table_dir in lake["tables"]:
        df = spark.read.option("mergeSchema", "true").parquet(str(table_dir))
        rel = duck_table(con, table_dir)
        spark_types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
        duck_types = dict(zip(rel.columns, rel.types))
        assert set(spark_types) == set(duck_types), f"{table_dir.name}: columns differ"
        for col, t in duck_types.items():
            # Hive partition folders: Spark infers int and date, DuckDB
            # bigint and date.
            want = {"schema_version": "int", "dt": "date"}.get(col) or spark_type_of_duck(t)
            assert spark_types[col] == want, f"{table_dir.name}.{col}: Spark reads {spark_types[col]}, DuckDB {t}"
        for col in ("op_type", "op_ts", "absent_columns", "before_image"):
            if col in spark_types:
                assert spark_types[col].split("<")[0] == {"op_type": "string", "op_ts": "timestamp",
                                                          "absent_columns": "array",
                                                          "before_image": "struct"}[col], (table_dir.name, col)
        if lake["stream"] == "edge_types":
            assert {c: spark_types[c] for c in EDGE_TYPES} == EDGE_TYPES
            assert spark_types["before_image"].startswith("struct<ID:bigint,AMOUNT:decimal(38,9),")
        spark_rows = rows_of(df.columns, df.collect())
        duck_rows = rows_of(rel.columns, rel.fetchall())
        assert len(spark_rows) == len(duck_rows), f"{table_dir.name}: Spark reads {len(spark_rows)} rows, DuckDB {len(duck_rows)}"
        for s, d in zip(spark_rows, duck_rows):
            assert s == d, f"{table_dir.name}: Spark and DuckDB differ"


def views_sql(exporter, lake, dialect):
    out = subprocess.run([exporter, "views", "--sink", f"file://{lake['dir']}", "--dialect", dialect],
                         check=True, capture_output=True, text=True).stdout
    body = "\n".join(line for line in out.splitlines() if not line.startswith("--"))
    return [s.strip() for s in body.split(";\n") if s.strip().rstrip(";")]


def test_spark_current_state_equals_duckdb(spark, exporter, lake):
    for stmt in views_sql(exporter, lake, "spark"):
        spark.sql(stmt.rstrip(";"))
    con = duck()
    for stmt in views_sql(exporter, lake, "duckdb"):
        con.execute(stmt)
    for table_dir in lake["tables"]:
        view = table_dir.name + "__current"
        df = spark.sql(f"SELECT * FROM `{view}`")
        rel = con.sql(f'SELECT * FROM "{view}"')
        assert df.columns == rel.columns, view
        spark_rows = rows_of(df.columns, df.collect())
        duck_rows = rows_of(rel.columns, rel.fetchall())
        assert spark_rows == duck_rows, f"{view}: Spark's current state differs from DuckDB's"
        assert duck_rows, f"{view} is empty"
