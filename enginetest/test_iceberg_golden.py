"""The golden streams published as Iceberg tables, read through the catalog
by independent engines.

Every golden stream (GoldenGate with a DDL in the middle, Qlik, the edge
types, partial images, and bounds.jsonl: every type the exporter writes at
its edges) is exported in several runs, so that each table has several
snapshots, with --catalog hadoop, sql on SQLite and sql on PostgreSQL (with
EXPORTER_TEST_POSTGRES_DSN), in row groups of 8 rows. Then pyiceberg and
Spark (iceberg-spark-runtime, configured with what `exporter views
--dialect spark` prints: the hadoop catalog, or the JDBC catalog on SQLite
or PostgreSQL) read every snapshot of every table (time travel): its
schema's columns, its rows and every value equal DuckDB's reading of the
snapshot's files. A filter on op_ts plans fewer files and gives the rows
of the unfiltered read filtered afterwards.

Bounds: the bounds stream is also exported with both Parquet encoders and
both --int-encoding values; for every column, each file's smallest and
largest values, as =, <, >, <=, >= and a range between them, give the
same counts through the table (pyiceberg's file planning, Spark's
filtered scan) as over the table's rows loaded without a filter.

pyiceberg has no hadoop catalog and no PostgreSQL driver in this
environment: for those it reads the current metadata file that
`exporter tables` names (read through the catalog by the exporter).
"""

import datetime
import decimal
import math
import os
import subprocess
import uuid
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import ROOT
from test_spark_reads import rows_of

HERE = Path(__file__).resolve().parent

# name: (input, type hints file or None, the runs end after these lines,
# then the whole stream)
STREAMS = {
    "goldengate": (ROOT / "testdata/goldengate/sample.jsonl", None, [8, 18]),
    "qlik": (ROOT / "testdata/qlik/sample.jsonl", None, [5]),
    "edge_types": (HERE / "testdata/edge_types.jsonl", HERE / "testdata/edge_types.hints", [4]),
    "partial": (HERE / "testdata/partial.jsonl", None, [4]),
    "bounds": (HERE / "testdata/bounds.jsonl", HERE / "testdata/bounds.hints", [5, 125]),
}

CATALOGS = ["hadoop", "sqlite"] + (["postgres"] if os.environ.get("EXPORTER_TEST_POSTGRES_DSN") else [])
ENCODINGS = [("lean", "delta"), ("lean", "plain"), ("arrow", "delta"), ("arrow", "plain")]


def needs_spark():
    if not os.environ.get("EXPORTER_TEST_ICEBERG_JAR"):
        pytest.skip("EXPORTER_TEST_ICEBERG_JAR is not set (scripts/spark.sh sets it)")


def catalog_flags(catalog, work, lake_id):
    if catalog == "hadoop":
        return ["--catalog", "hadoop"]
    if catalog == "sqlite":
        return ["--catalog", "sql", "--catalog-uri", f"sqlite://{work / 'catalog.db'}"]
    # The database outlives the test: a namespace of the lake's own.
    return ["--catalog", "sql", "--catalog-uri", os.environ["EXPORTER_TEST_POSTGRES_DSN"],
            "--catalog-namespace", f"golden_{lake_id}_{uuid.uuid4().hex[:8]}"]


def export_lake(exporter, work, catalog, stream, encoder="lean", ints="delta"):
    """Exports stream in runs appending to one input file, as a producer
    would; returns what the tests need to reach the tables."""
    path, hints, cuts = STREAMS[stream]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    sink = work / "lake"
    flags = catalog_flags(catalog, work, f"{stream}_{encoder}_{ints}")
    extra = ["--parquet-encoder", encoder, "--int-encoding", ints, "--row-group-rows", "8"]
    if hints:
        extra += ["--type-hint", hints.read_text(encoding="utf-8").strip()]
    src = work / f"{stream}.jsonl"
    for cut in cuts + [len(lines)]:
        src.write_text("".join(lines[:cut]), encoding="utf-8")
        subprocess.run([exporter, "run", "--source", f"file:{src}", "--sink", f"file://{sink}", "--once",
                        "--max-rejects", "0", "--log-level", "warn", *extra, *flags], check=True, capture_output=True)
    out = subprocess.run([exporter, "tables", "--sink", f"file://{sink}", *flags],
                         check=True, capture_output=True, text=True).stdout
    # The second block: TABLE, ICEBERG TABLE, SNAPSHOT, COMMITTED, ROWS,
    # DATA FILES, METADATA.
    block = out.split("ICEBERG TABLE", 1)[1].splitlines()[1:]
    tables = {}
    for line in block:
        cells = line.split()
        if len(cells) >= 7:
            tables[cells[0]] = (tuple(cells[1].split(".")), cells[-1].removeprefix("file://"))
    assert tables, f"exporter tables shows no Iceberg table:\n{out}"
    views = subprocess.run([exporter, "views", "--sink", f"file://{sink}", "--dialect", "spark", *flags],
                           check=True, capture_output=True, text=True).stdout
    settings = [line.rstrip(";") for line in views.splitlines() if line.startswith("SET spark.sql.catalog.lakehouse")]
    return {"catalog": catalog, "work": work, "sink": sink, "tables": tables, "spark_settings": settings,
            "stream": stream}


def pyiceberg_table(lake, source_table):
    ident, metadata = lake["tables"][source_table]
    if lake["catalog"] == "sqlite":
        from pyiceberg.catalog.sql import SqlCatalog

        # The catalog's name is the one the exporter stores in every row.
        cat = SqlCatalog("lakehouse", uri=f"sqlite:///{lake['work'] / 'catalog.db'}",
                         warehouse=f"file://{lake['sink']}/_iceberg")
        return cat.load_table(ident)
    if lake["catalog"] == "postgres":
        from pyiceberg.catalog.sql import SqlCatalog

        # The exporter's DSN, for SQLAlchemy with psycopg (scripts/spark.sh).
        dsn = os.environ["EXPORTER_TEST_POSTGRES_DSN"]
        cat = SqlCatalog("lakehouse", uri="postgresql+psycopg://" + dsn.split("://", 1)[1],
                         warehouse=f"file://{lake['sink']}/_iceberg")
        return cat.load_table(ident)
    # pyiceberg has no hadoop catalog: the table's current metadata file.
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(metadata)


def spark_session(spark, lake):
    """A Spark session whose catalog `lakehouse` is the lake's: each lake
    gets a session of its own, since the SQL catalog's rows carry the name
    lakehouse and a Spark catalog is set up once per session."""
    needs_spark()
    if "session" not in lake:
        session = spark.newSession()
        for stmt in lake["spark_settings"]:
            session.sql(stmt)
        lake["session"] = session
    return lake["session"]


def spark_name(ident):
    return "lakehouse." + ".".join(f"`{p}`" for p in ident)


def duck():
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con


def files_rel(con, paths):
    listed = ", ".join(f"'{p}'" for p in paths)
    return con.sql(f"SELECT * FROM read_parquet([{listed}], union_by_name = true, hive_partitioning = false)")


def duck_rows(con, paths, schema):
    """The files' rows under an Iceberg schema's top-level columns and
    struct members (the files of older versions have members it dropped)."""
    from pyiceberg.types import StructType

    rel = files_rel(con, paths)
    have = set(rel.columns)
    cols = []
    for f in schema.fields:
        if f.name not in have:
            cols.append(f'NULL AS "{f.name}"')
        elif isinstance(f.field_type, StructType):
            members = ", ".join(f"'{m.name}': \"{f.name}\".\"{m.name}\"" for m in f.field_type.fields)
            cols.append(f'CASE WHEN "{f.name}" IS NULL THEN NULL ELSE {{{members}}} END AS "{f.name}"')
        else:
            cols.append(f'"{f.name}"')
    cols = ", ".join(cols)
    listed = ", ".join(f"'{p}'" for p in paths)
    return con.sql(f"SELECT {cols} FROM read_parquet([{listed}], union_by_name = true, hive_partitioning = false)").fetchall()


def snapshot_files(tbl, snapshot_id):
    return sorted(t.file.file_path.removeprefix("file://") for t in tbl.scan(snapshot_id=snapshot_id).plan_files())


def newest_version_columns(con, paths):
    newest = max(paths, key=lambda p: int(p.split("/schema_version=")[1].split("/")[0]))
    return set(con.sql(f"SELECT * FROM read_parquet('{newest}', hive_partitioning = false)").columns)


@pytest.fixture(scope="module", params=[(c, s) for c in CATALOGS for s in STREAMS], ids=lambda p: "-".join(p))
def golden(request, exporter, tmp_path_factory):
    catalog, stream = request.param
    return export_lake(exporter, tmp_path_factory.mktemp(f"golden-{catalog}-{stream}"), catalog, stream)


def test_pyiceberg_reads_every_snapshot(golden):
    con = duck()
    for source_table in golden["tables"]:
        tbl = pyiceberg_table(golden, source_table)
        snapshots = tbl.metadata.snapshots
        assert len(snapshots) >= 1, source_table
        schemas = {s.schema_id: s for s in tbl.metadata.schemas}
        for snap in snapshots:
            paths = snapshot_files(tbl, snap.snapshot_id)
            got = tbl.scan(snapshot_id=snap.snapshot_id).to_arrow()
            want_cols = [f.name for f in schemas[snap.schema_id].fields]
            where = f"{source_table} snapshot {snap.snapshot_id}"
            assert got.column_names == want_cols, where
            assert set(want_cols) == newest_version_columns(con, paths), where
            assert got.num_rows == int(snap.summary["total-records"]), where
            want = duck_rows(con, paths, schemas[snap.schema_id])
            scanned = [tuple(r[c] for c in want_cols) for r in got.to_pylist()]
            assert rows_of(want_cols, scanned) == rows_of(want_cols, want), where
            # Field IDs: each file's columns carry the IDs of the schema
            # of its version.
            for p in paths:
                version = p.split("/schema_version=")[1].split("/")[0]
                sc = schemas[int(tbl.properties[f"lakehouse-exporter.schema-version.{version}"])]
                for field in pq.read_schema(p):
                    assert int(field.metadata[b"PARQUET:field_id"]) == sc.find_field(field.name).field_id, (p, field.name)


def test_spark_reads_every_snapshot(spark, golden):
    session = spark_session(spark, golden)
    con = duck()
    for source_table, (ident, _) in golden["tables"].items():
        tbl = pyiceberg_table(golden, source_table)
        schemas = {s.schema_id: s for s in tbl.metadata.schemas}
        for snap in tbl.metadata.snapshots:
            paths = snapshot_files(tbl, snap.snapshot_id)
            df = session.sql(f"SELECT * FROM {spark_name(ident)} VERSION AS OF {snap.snapshot_id}")
            want_cols = [f.name for f in schemas[snap.schema_id].fields]
            where = f"{source_table} snapshot {snap.snapshot_id}"
            assert df.columns == want_cols, where
            got = canon_rows(df.collect())
            assert rows_of(want_cols, got) == rows_of(want_cols, canon_rows(duck_rows(con, paths, schemas[snap.schema_id]))), where


def canon(v):
    """A value with its decimals written out the same way whatever their
    exponent (Spark hands -1.00E-10 where DuckDB hands -0.0000000001)."""
    if isinstance(v, decimal.Decimal):
        return decimal.Decimal(format(v.normalize(), "f"))
    if hasattr(v, "asDict"):
        v = v.asDict(recursive=False)
    if isinstance(v, dict):
        return {k: canon(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [canon(x) for x in v]
    return v


def canon_rows(rows):
    return [tuple(canon(x) for x in r) for r in rows]


def last_day(rows):
    days = sorted({r["op_ts"].date() for r in rows})
    return days[-1] if len(days) > 1 else None


def test_op_ts_filter_prunes_files(request, golden):
    """A filter on op_ts plans fewer files through pyiceberg and gives,
    through pyiceberg and Spark, the rows of the unfiltered read filtered
    afterwards."""
    from pyiceberg.expressions import GreaterThanOrEqual

    pruned_some = False
    for source_table, (ident, _) in golden["tables"].items():
        tbl = pyiceberg_table(golden, source_table)
        everything = tbl.scan().to_arrow().to_pylist()
        day = last_day(everything)
        if day is None:
            continue
        start = datetime.datetime.combine(day, datetime.time(), datetime.timezone.utc)
        flt = GreaterThanOrEqual("op_ts", start.isoformat())
        all_files, some_files = list(tbl.scan().plan_files()), list(tbl.scan(row_filter=flt).plan_files())
        assert 0 < len(some_files) < len(all_files), source_table
        pruned_some = True
        want = sorted(r["pos"] for r in everything if r["op_ts"] >= start)
        assert sorted(tbl.scan(row_filter=flt).to_arrow().column("pos").to_pylist()) == want, source_table
        if os.environ.get("EXPORTER_TEST_ICEBERG_JAR"):
            session = spark_session(request.getfixturevalue("spark"), golden)
            got = session.sql(f"SELECT pos FROM {spark_name(ident)} WHERE op_ts >= TIMESTAMP '{day} 00:00:00'").collect()
            assert sorted(r.pos for r in got) == want, source_table
    # The Qlik sample's changes are all of one day.
    assert pruned_some or golden["stream"] == "qlik", "no table spans two days"


# Bounds: the bounds stream with both encoders and both integer encodings.

OPS = ["=", "<", ">", "<=", ">="]
PY_OPS = {"=": lambda a, b: a == b, "<": lambda a, b: a < b, ">": lambda a, b: a > b,
          "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}


@pytest.fixture(scope="module", params=ENCODINGS, ids=lambda p: "-".join(p))
def bounds_lake(request, exporter, tmp_path_factory):
    encoder, ints = request.param
    lake = export_lake(exporter, tmp_path_factory.mktemp(f"bounds-{encoder}-{ints}"), "hadoop", "bounds", encoder, ints)
    tbl = pyiceberg_table(lake, "BOUNDS.TYPES")
    con = duck()
    # Every row of every file, as DuckDB reads it: the rows the filters
    # are checked against, and each file's smallest and largest values.
    lake["files"] = {}
    for task in tbl.scan().plan_files():
        p = task.file.file_path.removeprefix("file://")
        rel = con.sql(f"SELECT * FROM read_parquet('{p}', hive_partitioning = false)")
        lake["files"][p] = [dict(zip(rel.columns, r)) for r in rel.fetchall()]
    assert len(lake["files"]) >= 4
    lake["table"] = tbl
    lake["encoding"] = (encoder, ints)
    return lake


def bound_columns(tbl):
    from pyiceberg.types import ListType, StructType

    return [f for f in tbl.schema().fields if not isinstance(f.field_type, (ListType, StructType))]


def probes(lake, column):
    """(op, value) pairs: each file's smallest and largest value of the
    column (NaN left out: it is in no order) under every operator, and
    (between, lo, hi) for each file's range."""
    out = []
    for rows in lake["files"].values():
        vals = [r[column] for r in rows if r[column] is not None and not (isinstance(r[column], float) and math.isnan(r[column]))]
        if not vals:
            continue
        lo, hi = min(vals), max(vals)
        for v in (lo, hi):
            out += [(op, v) for op in OPS]
        out.append(("between", lo, hi))
    return out


def matches(probe, v):
    if v is None:
        return False
    if probe[0] == "between":
        return probe[1] <= v <= probe[2]
    return PY_OPS[probe[0]](v, probe[1])


def pyiceberg_expr(column, probe):
    from pyiceberg import expressions as ex

    def lit(v):
        if isinstance(v, datetime.datetime):
            return v.astimezone(datetime.timezone.utc).isoformat()
        if isinstance(v, datetime.date):
            return v.isoformat()
        return v

    if probe[0] == "between":
        return ex.And(ex.GreaterThanOrEqual(column, lit(probe[1])), ex.LessThanOrEqual(column, lit(probe[2])))
    op = {"=": ex.EqualTo, "<": ex.LessThan, ">": ex.GreaterThan, "<=": ex.LessThanOrEqual, ">=": ex.GreaterThanOrEqual}
    return op[probe[0]](column, lit(probe[1]))


def test_pyiceberg_filters_count_every_row(bounds_lake):
    """The files pyiceberg plans for a filter hold every row the filter
    passes: the counts over the planned files equal the counts over all
    rows."""
    if bounds_lake["encoding"] not in (("lean", "delta"), ("arrow", "plain")):
        # The integer encoding changes pages, not statistics: one each
        # is enough here (Spark and the Go test take all four).
        pytest.skip("covered by the other integer encoding")
    tbl = bounds_lake["table"]
    for field in bound_columns(tbl):
        for probe in probes(bounds_lake, field.name):
            want = sum(matches(probe, r[field.name]) for rows in bounds_lake["files"].values() for r in rows)
            planned = {t.file.file_path.removeprefix("file://") for t in tbl.scan(row_filter=pyiceberg_expr(field.name, probe)).plan_files()}
            got = sum(matches(probe, r[field.name]) for p in planned for r in bounds_lake["files"][p])
            assert got == want, f"{field.name} {probe[0]} {probe[1:]}: {got} rows in the files pyiceberg plans, {want} in the table"
    # One full scan with a filter per column type: pyiceberg applies it
    # to the rows too.
    for field in bound_columns(tbl):
        ps = probes(bounds_lake, field.name)
        if ps:
            probe = ps[-1]
            want = sum(matches(probe, r[field.name]) for rows in bounds_lake["files"].values() for r in rows)
            assert tbl.scan(row_filter=pyiceberg_expr(field.name, probe)).to_arrow().num_rows == want, (field.name, probe)


def spark_literal(field, v):
    from pyiceberg.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType, LongType, StringType,
                                 TimestamptzType)

    t = field.field_type
    if isinstance(t, LongType):
        return f"CAST({v} AS BIGINT)"
    if isinstance(t, DecimalType):
        return f"CAST('{v}' AS DECIMAL({t.precision},{t.scale}))"
    if isinstance(t, DoubleType):
        text = "-0.0" if v == 0 and math.copysign(1, v) < 0 else repr(float(v)).replace("inf", "Infinity")
        return f"CAST('{text}' AS DOUBLE)"
    if isinstance(t, StringType):
        return f"CAST(X'{v.encode().hex()}' AS STRING)"
    if isinstance(t, BinaryType):
        return f"X'{bytes(v).hex()}'"
    if isinstance(t, DateType):
        return f"DATE'{v.isoformat()}'"
    if isinstance(t, TimestamptzType):
        micros = (v - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(microseconds=1)
        return f"timestamp_micros({micros})"
    if isinstance(t, BooleanType):
        return "true" if v else "false"
    raise AssertionError(f"no Spark literal for {t}")


def spark_predicate(field, probe):
    col = f"`{field.name}`"
    if probe[0] == "between":
        return f"{col} BETWEEN {spark_literal(field, probe[1])} AND {spark_literal(field, probe[2])}"
    return f"{col} {probe[0]} {spark_literal(field, probe[1])}"


def test_spark_filters_count_every_row(spark, bounds_lake):
    """Spark's filtered counts through the catalog (file pruning on the
    manifests' bounds, then Parquet's own) equal the same filters over
    the table's rows loaded without a filter into Spark. Each Spark scan
    of the table costs about half a second here, so Spark runs filters that
    a bound too tight fails: = each file's smallest and largest value, and
    BETWEEN them; pyiceberg runs all of them."""
    if bounds_lake["encoding"] != ("lean", "delta"):
        # Spark's scans take most of this test's time: the default
        # encoder only (pyiceberg and the Go test take the others).
        pytest.skip("Spark probes the default encoder's bounds")
    session = spark_session(spark, bounds_lake)
    ident, _ = bounds_lake["tables"]["BOUNDS.TYPES"]
    name = spark_name(ident)
    df = session.table(name)
    # Read once without a filter and kept: filters on it prune nothing.
    df.localCheckpoint(eager=True).createOrReplaceTempView("bounds_unfiltered")
    for field in bound_columns(bounds_lake["table"]):
        ps = []
        for rows in bounds_lake["files"].values():
            edges = [p for p in probes({"files": {"": rows}}, field.name)]
            if edges:
                lo, hi = edges[0][1], edges[5][1]
                ps += [("=", lo), ("=", hi), ("between", lo, hi)]
        if not ps:
            continue
        preds = [spark_predicate(field, p) for p in ps]

        def counts(rel):
            # One query: each filter is its own scan, pruned on its own.
            q = " UNION ALL ".join(f"SELECT {i} AS i, count(*) AS n FROM {rel} WHERE {p}" for i, p in enumerate(preds))
            return sorted(tuple(r) for r in session.sql(q).collect())

        got, want = counts(name), counts("bounds_unfiltered")
        for (i, g), (_, w) in zip(got, want):
            assert g == w, f"{preds[i]}: Spark counts {g} rows through the table, {w} over its rows loaded unfiltered"
