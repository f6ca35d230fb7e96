"""Independent readers of the tables after `exporter maintain`: the golden
GoldenGate stream (a DDL in the middle of each table, a partial image, a
delete) exported with the hadoop catalog in three rounds, a row per file,
then one maintenance pass that compacts and expires, in one commit per
table, all but the newest two snapshots. pyiceberg and Spark read the same rows before and after,
the table holds one file per partition and schema version, and time
travel to the older kept snapshot reads what the table read before the
pass.
"""

import os
import subprocess

import pytest

from conftest import ROOT

TABLES = [("SALES", "ORDERS"), ("HR", "EMPLOYEES")]


def metadata_file(sink, ns, name):
    meta = sink / "_iceberg" / ns / name / "metadata"
    hint = (meta / "version-hint.text").read_text().strip()
    return str(meta / f"v{hint}.metadata.json")


def static(sink, ident):
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(metadata_file(sink, *ident))


def rows(tbl, snapshot_id=None):
    scan = tbl.scan(snapshot_id=snapshot_id) if snapshot_id else tbl.scan()
    return sorted(repr(sorted(r.items())) for r in scan.to_arrow().to_pylist())


@pytest.fixture(scope="module")
def maintained(exporter, tmp_path_factory):
    """The lake before and after the pass: per table, the rows, the
    current snapshot and the live files before, and the snapshot ids
    after."""
    dir = tmp_path_factory.mktemp("maintain")
    sink, src = dir / "lake", dir / "in.jsonl"
    lines = (ROOT / "testdata/goldengate/sample.jsonl").read_text().splitlines(keepends=True)
    for cut in (len(lines) // 3, 2 * len(lines) // 3, len(lines)):
        src.write_text("".join(lines[:cut]))
        subprocess.run(
            [exporter, "run", "--source", f"file:{src}", "--sink", f"file://{sink}", "--file-max-rows", "1",
             "--catalog", "hadoop", "--log-level", "warn"],
            check=True, capture_output=True,
        )
    before = {}
    for ident in TABLES:
        tbl = static(sink, ident)
        before[ident] = {
            "rows": rows(tbl),
            "snapshots": {s.snapshot_id for s in tbl.metadata.snapshots},
            "newest": tbl.current_snapshot().snapshot_id,
            "files": len(list(tbl.scan().plan_files())),
            "pos": sorted(tbl.scan(selected_fields=("pos",)).to_arrow()["pos"].to_pylist()),
        }
    out = subprocess.run(
        [exporter, "maintain", "--sink", f"file://{sink}", "--catalog", "hadoop", "--expire-after", "1ns",
         "--keep-snapshots", "2", "--log-level", "warn"],
        check=True, capture_output=True, text=True,
    ).stdout
    assert "files rewritten" in out, out
    return sink, before


@pytest.mark.parametrize("ident", TABLES, ids=lambda i: ".".join(i))
def test_pyiceberg_reads_the_same_rows_after_maintenance(maintained, ident):
    sink, before = maintained
    tbl = static(sink, ident)
    assert rows(tbl) == before[ident]["rows"]
    files = list(tbl.scan().plan_files())
    folders = [os.path.dirname(t.file.file_path) for t in files]
    assert len(folders) == len(set(folders)), folders  # one file per partition and version
    assert len(files) < before[ident]["files"]
    # The newest two snapshots are kept: the last round's and the pass's
    # one commit (compaction and expiry together; it changes no row). Every
    # older round's is expired; time travel to the kept round reads the
    # rows as they were.
    kept = sorted(tbl.metadata.snapshots, key=lambda s: s.timestamp_ms)
    assert len(kept) == 2
    assert kept[0].snapshot_id == before[ident]["newest"]
    assert kept[1].snapshot_id not in before[ident]["snapshots"]
    assert rows(tbl, kept[0].snapshot_id) == before[ident]["rows"]


def test_maintenance_expired_older_rounds(maintained):
    sink, before = maintained
    expired = 0
    for ident in TABLES:
        kept = {s.snapshot_id for s in static(sink, ident).metadata.snapshots}
        older = before[ident]["snapshots"] - {before[ident]["newest"]}
        assert not older & kept, (ident, older & kept)
        expired += len(older)
    assert expired, "no table had a round before its last: the test proves nothing about expiry"


@pytest.mark.parametrize("ident", TABLES, ids=lambda i: ".".join(i))
def test_spark_reads_the_same_rows_after_maintenance(spark, maintained, ident):
    if not os.environ.get("EXPORTER_TEST_ICEBERG_JAR"):
        pytest.skip("EXPORTER_TEST_ICEBERG_JAR is not set (scripts/spark.sh sets it)")
    sink, before = maintained
    # A catalog of its own, uncached: the other tests' lakehouse catalog
    # points at another warehouse.
    spark.conf.set("spark.sql.catalog.maintained", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set("spark.sql.catalog.maintained.type", "hadoop")
    spark.conf.set("spark.sql.catalog.maintained.cache-enabled", "false")
    spark.conf.set("spark.sql.catalog.maintained.warehouse", f"file://{sink}/_iceberg")
    name = "maintained." + ".".join(ident)
    now = spark.table(name)
    oldest = min(static(sink, ident).metadata.snapshots, key=lambda s: s.timestamp_ms).snapshot_id
    old = spark.sql(f"SELECT * FROM {name} VERSION AS OF {oldest}")
    want = before[ident]["pos"]
    assert sorted(r.pos for r in now.select("pos").collect()) == want
    assert sorted(r.pos for r in old.select("pos").collect()) == want
    assert now.count() == old.count() == len(before[ident]["rows"])
