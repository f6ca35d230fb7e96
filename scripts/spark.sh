# Sourced by scripts/test.sh: installs, into a cache folder outside the
# repository (once per set of versions), a Python virtual environment with
# pinned PySpark, pyiceberg, pyarrow, DuckDB and pytest, and the
# iceberg-spark-runtime jar that matches that Spark (from Maven Central
# through mvn). Needs python3 (3.10 or later), a JDK 17 and mvn.
SPARK_VERSION=4.1.4
SPARK_SCALA=2.13
ICEBERG_VERSION=1.12.0
PYICEBERG_VERSION=0.12.0
PYARROW_VERSION=22.0.0
DUCKDB_VERSION=1.5.6
PYTEST_VERSION=9.0.3
TOOLS_CACHE=${EXPORTER_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lakehouse-exporter}
TOOLS_M2=$TOOLS_CACHE/m2
SPARK_ENV=$TOOLS_CACHE/pyspark-$SPARK_VERSION-iceberg-$ICEBERG_VERSION-pyiceberg-$PYICEBERG_VERSION-pyarrow-$PYARROW_VERSION-duckdb-$DUCKDB_VERSION
ICEBERG_JAR_NAME=iceberg-spark-runtime-${SPARK_VERSION%.*}_$SPARK_SCALA

spark_install() {
  if [ ! -f "$SPARK_ENV/.complete" ]; then
    echo "installing PySpark $SPARK_VERSION, pyiceberg, pyarrow, DuckDB and pytest into $SPARK_ENV..."
    rm -rf "$SPARK_ENV"
    python3 -m venv "$SPARK_ENV"
    "$SPARK_ENV/bin/pip" install -q --disable-pip-version-check \
      "pyspark==$SPARK_VERSION" "pyiceberg==$PYICEBERG_VERSION" "pyarrow==$PYARROW_VERSION" \
      "duckdb==$DUCKDB_VERSION" "pytest==$PYTEST_VERSION" </dev/null
    (cd "$SPARK_ENV" && mvn -B -q -Dmaven.repo.local="$TOOLS_M2" \
      org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
      -Dartifact="org.apache.iceberg:$ICEBERG_JAR_NAME:$ICEBERG_VERSION" -DoutputDirectory="$SPARK_ENV/jars") </dev/null
    touch "$SPARK_ENV/.complete"
  fi
  export EXPORTER_TEST_PYTHON=$SPARK_ENV/bin/python
  export EXPORTER_TEST_ICEBERG_JAR=$SPARK_ENV/jars/$ICEBERG_JAR_NAME-$ICEBERG_VERSION.jar
}
