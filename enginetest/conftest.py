"""Shared fixtures of the engine tests: the exporter binary, one Spark
session for every test (a JVM start costs seconds), and lakes written once
per stream and writer setting.

Run by scripts/test.sh in the virtual environment of scripts/spark.sh:
    $EXPORTER_TEST_PYTHON -m pytest enginetest
"""

import os
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Spark hands timestamps to Python as naive datetimes in the Python
# process's local zone, DuckDB as aware ones: with both in UTC the values
# compare as they are.
os.environ["TZ"] = "UTC"
time.tzset()


@pytest.fixture(scope="session")
def exporter(tmp_path_factory):
    """The exporter binary: EXPORTER_TEST_EXPORTER_BIN, or built here."""
    given = os.environ.get("EXPORTER_TEST_EXPORTER_BIN")
    if given:
        return given
    out = tmp_path_factory.mktemp("bin") / "exporter"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/exporter"], cwd=ROOT, check=True)
    return str(out)


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    # Local mode on the two cores CI has, small memory, no UI: the
    # lakes here are a few kilobytes.
    builder = SparkSession.builder
    # Iceberg's runtime jar (scripts/spark.sh) must be on the JVM's class
    # path when it starts: the Iceberg tests add their catalogs later.
    jar = os.environ.get("EXPORTER_TEST_ICEBERG_JAR")
    if jar:
        # PostgreSQL's and SQLite's JDBC drivers too, for the JDBC
        # catalog's tests.
        for driver in ("EXPORTER_TEST_POSTGRES_JAR", "EXPORTER_TEST_SQLITE_JAR"):
            path = os.environ.get(driver)
            if path and os.path.exists(path):
                jar += "," + path
        builder = builder.config("spark.jars", jar).config(
            "spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
        )
    session = (
        builder.master("local[2]")
        .appName("lakehouse-exporter-enginetest")
        .config("spark.driver.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -Duser.timezone=UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
