# Sourced by scripts/test.sh: installs, into a cache folder outside the
# repository (once per set of versions), a Python virtual environment with
# pinned PySpark, pyiceberg, pyarrow, DuckDB and pytest, and the
# iceberg-spark-runtime jar that matches that Spark (from Maven Central
# through mvn). Needs python3 (3.10 or later), a JDK 17 and mvn.
# The Python packages are pinned in enginetest/requirements.txt; the
# iceberg-spark-runtime jar must match its pyspark's minor version.
SPARK_MINOR=4.1
SPARK_SCALA=2.13
ICEBERG_VERSION=1.12.0
TOOLS_CACHE=${EXPORTER_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lakehouse-exporter}
TOOLS_M2=$TOOLS_CACHE/m2
ICEBERG_JAR_NAME=iceberg-spark-runtime-${SPARK_MINOR}_$SPARK_SCALA
# PostgreSQL's JDBC driver, for Spark's JDBC catalog over the tables the
# exporter publishes with --catalog sql on PostgreSQL.
POSTGRES_JDBC_VERSION=42.7.14
SQLITE_JDBC_VERSION=3.53.0.0
PSYCOPG_VERSION=3.3.9
SPARK_REQUIREMENTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/enginetest/requirements.txt
SPARK_ENV=$TOOLS_CACHE/pyenv-$( (cat "$SPARK_REQUIREMENTS"; echo "$ICEBERG_JAR_NAME:$ICEBERG_VERSION postgresql:$POSTGRES_JDBC_VERSION"; python3 --version) | sha256sum | cut -c1-12)

spark_install() {
  if [ ! -f "$SPARK_ENV/.complete" ]; then
    echo "installing enginetest/requirements.txt (PySpark, pyiceberg, SQLAlchemy, pyarrow, DuckDB, pytest), $ICEBERG_JAR_NAME $ICEBERG_VERSION and the PostgreSQL JDBC driver into $SPARK_ENV (a cold install takes a few minutes)..."
    rm -rf "$SPARK_ENV"
    python3 -m venv "$SPARK_ENV"
    "$SPARK_ENV/bin/pip" install -q --disable-pip-version-check -r "$SPARK_REQUIREMENTS" </dev/null
    (cd "$SPARK_ENV" && mvn -B -q -Dmaven.repo.local="$TOOLS_M2" \
      org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
      -Dartifact="org.apache.iceberg:$ICEBERG_JAR_NAME:$ICEBERG_VERSION" -DoutputDirectory="$SPARK_ENV/jars") </dev/null
    (cd "$SPARK_ENV" && mvn -B -q -Dmaven.repo.local="$TOOLS_M2" \
      org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
      -Dartifact="org.postgresql:postgresql:$POSTGRES_JDBC_VERSION" -DoutputDirectory="$SPARK_ENV/jars") </dev/null
    touch "$SPARK_ENV/.complete"
  fi
  # SQLite's JDBC driver, for Spark's JDBC catalog over the tables of
  # --catalog sql on SQLite; fetched apart so that an installed
  # environment is not installed again for it.
  if [ ! -f "$SPARK_ENV/jars/sqlite-jdbc-$SQLITE_JDBC_VERSION.jar" ]; then
    (cd "$SPARK_ENV" && mvn -B -q -Dmaven.repo.local="$TOOLS_M2" \
      org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
      -Dartifact="org.xerial:sqlite-jdbc:$SQLITE_JDBC_VERSION" -DoutputDirectory="$SPARK_ENV/jars") </dev/null
  fi
  # psycopg, for pyiceberg's SqlCatalog on PostgreSQL (the tables of
  # --catalog sql on PostgreSQL, read through the catalog); installed
  # apart for the same reason.
  if ! "$SPARK_ENV/bin/python" -c 'import psycopg' 2>/dev/null; then
    "$SPARK_ENV/bin/pip" install -q --disable-pip-version-check "psycopg[binary]==$PSYCOPG_VERSION" </dev/null
  fi
  export EXPORTER_TEST_PYTHON=$SPARK_ENV/bin/python
  export EXPORTER_TEST_SQLITE_JAR=$SPARK_ENV/jars/sqlite-jdbc-$SQLITE_JDBC_VERSION.jar
  export EXPORTER_TEST_ICEBERG_JAR=$SPARK_ENV/jars/$ICEBERG_JAR_NAME-$ICEBERG_VERSION.jar
  export EXPORTER_TEST_POSTGRES_JAR=$SPARK_ENV/jars/postgresql-$POSTGRES_JDBC_VERSION.jar
}
