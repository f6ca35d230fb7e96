# Sourced by scripts/test.sh: installs Apache Iceberg's REST catalog test
# server (org.apache.iceberg.rest.RESTCatalogServer from the test-fixtures
# jar of org.apache.iceberg:iceberg-open-api, the server behind the
# apache/iceberg-rest-fixture image) and its runtime jars from Maven
# Central through mvn into a cache folder outside the repository, once per
# version, and starts it on a free port with a throw-away warehouse folder
# and SQLite catalog database (its JDBC catalog backend).
# Needs a JDK 17 and mvn on the PATH.
#
# The server has no setting for its listen address: Jetty's Server(port)
# binds every interface (0.0.0.0). It has no authentication either, so it
# only lives as long as the tests.
ICEBERG_REST_VERSION=1.11.0
# The versions the fixture is built with in Iceberg 1.11.0
# (gradle/libs.versions.toml), written here so that Maven does not pick
# older ones from Hadoop's dependencies.
ICEBERG_REST_JETTY_VERSION=12.1.8
ICEBERG_REST_SQLITE_VERSION=3.53.0.0
ICEBERG_REST_HADOOP_VERSION=3.4.3
TOOLS_CACHE=${EXPORTER_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lakehouse-exporter}
ICEBERG_REST_HOME=$TOOLS_CACHE/iceberg-rest-$ICEBERG_REST_VERSION
# Maven's own downloads stay in the cache too, so that removing the cache
# removes everything.
TOOLS_M2=$TOOLS_CACHE/m2

restcatalog_install() {
  if [ -f "$ICEBERG_REST_HOME/.complete" ]; then return 0; fi
  echo "installing the Iceberg REST catalog test server $ICEBERG_REST_VERSION from Maven Central into $ICEBERG_REST_HOME..."
  rm -rf "$ICEBERG_REST_HOME"
  mkdir -p "$ICEBERG_REST_HOME"
  # The test-fixtures jar's POM declares none of what the fixture needs
  # (Gradle keeps that in its module metadata), so the dependencies are
  # the fixture's from Iceberg's build.gradle: iceberg-core and its tests
  # jar (RESTCatalogAdapter, RESTCatalogServlet), Jetty, SQLite JDBC and
  # hadoop-common, whose Configuration and local file system the JDBC
  # catalog's default HadoopFileIO uses, with the exclusions Iceberg's
  # build makes. The aws, gcp and azure modules the fixture also lists only
  # serve object stores and their credentials.
  local exclusions='' pair
  for pair in org.slf4j:'*' ch.qos.reload4j:'*' org.apache.avro:avro com.google.guava:'*' \
    com.google.protobuf:'*' org.apache.curator:'*' org.apache.zookeeper:'*' org.apache.kerby:'*' \
    org.apache.hadoop.thirdparty:hadoop-shaded-protobuf_3_7 org.eclipse.jetty:'*' com.google.re2j:re2j \
    com.google.code.gson:gson com.jcraft:jsch com.google.code.findbugs:jsr305 \
    io.dropwizard.metrics:metrics-core dnsjava:dnsjava org.xerial.snappy:snappy-java \
    commons-cli:commons-cli com.github.pjfanning:jersey-json; do
    exclusions="$exclusions<exclusion><groupId>${pair%%:*}</groupId><artifactId>${pair#*:}</artifactId></exclusion>"
  done
  cat >"$ICEBERG_REST_HOME/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>lakehouse-exporter.test</groupId>
  <artifactId>iceberg-rest-catalog</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.iceberg</groupId>
      <artifactId>iceberg-open-api</artifactId>
      <version>$ICEBERG_REST_VERSION</version>
      <classifier>test-fixtures</classifier>
    </dependency>
    <dependency>
      <groupId>org.apache.iceberg</groupId>
      <artifactId>iceberg-core</artifactId>
      <version>$ICEBERG_REST_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.iceberg</groupId>
      <artifactId>iceberg-core</artifactId>
      <version>$ICEBERG_REST_VERSION</version>
      <classifier>tests</classifier>
    </dependency>
    <dependency>
      <groupId>org.eclipse.jetty.ee10</groupId>
      <artifactId>jetty-ee10-servlet</artifactId>
      <version>$ICEBERG_REST_JETTY_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.eclipse.jetty.compression</groupId>
      <artifactId>jetty-compression-server</artifactId>
      <version>$ICEBERG_REST_JETTY_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.eclipse.jetty.compression</groupId>
      <artifactId>jetty-compression-gzip</artifactId>
      <version>$ICEBERG_REST_JETTY_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.xerial</groupId>
      <artifactId>sqlite-jdbc</artifactId>
      <version>$ICEBERG_REST_SQLITE_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-simple</artifactId>
      <version>2.0.17</version>
    </dependency>
    <dependency>
      <groupId>org.apache.hadoop</groupId>
      <artifactId>hadoop-common</artifactId>
      <version>$ICEBERG_REST_HADOOP_VERSION</version>
      <exclusions>$exclusions</exclusions>
    </dependency>
  </dependencies>
</project>
EOF
  (cd "$ICEBERG_REST_HOME" && mvn -B -q -Dmaven.repo.local="$TOOLS_M2" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$ICEBERG_REST_HOME/libs") </dev/null || return 1
  touch "$ICEBERG_REST_HOME/.complete"
}

restcatalog_start() {
  restcatalog_install || return 1
  ICEBERG_REST_DATA=$(mktemp -d)
  mkdir -p "$ICEBERG_REST_DATA/warehouse"
  local port
  port=$(go run ./tools/freeport)
  # The server reads its catalog properties from CATALOG_* variables
  # (CATALOG_REST_PORT is rest.port). A SQLite file, not :memory:: the
  # JDBC catalog pools connections and each would see a database of its
  # own.
  CATALOG_WAREHOUSE="file://$ICEBERG_REST_DATA/warehouse" \
    CATALOG_URI="jdbc:sqlite:file:$ICEBERG_REST_DATA/catalog.db" \
    CATALOG_REST_PORT=$port \
    java -Xms64m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -cp "$ICEBERG_REST_HOME/libs/*" org.apache.iceberg.rest.RESTCatalogServer \
    >"$ICEBERG_REST_DATA/server.log" 2>&1 &
  ICEBERG_REST_PID=$!
  if go run ./tools/waitready "http://127.0.0.1:$port/v1/config" 90s; then
    export EXPORTER_TEST_REST_URI="http://127.0.0.1:$port"
    export EXPORTER_TEST_REST_WAREHOUSE="file://$ICEBERG_REST_DATA/warehouse"
    echo "Iceberg REST catalog $ICEBERG_REST_VERSION ready at $EXPORTER_TEST_REST_URI"
    return 0
  fi
  echo "the Iceberg REST catalog did not become ready; its log:" >&2
  cat "$ICEBERG_REST_DATA/server.log" >&2
  return 1
}

restcatalog_stop() {
  if [ -n "${ICEBERG_REST_PID:-}" ]; then kill "$ICEBERG_REST_PID" 2>/dev/null; wait "$ICEBERG_REST_PID" 2>/dev/null || true; fi
  if [ -n "${ICEBERG_REST_DATA:-}" ]; then rm -rf "$ICEBERG_REST_DATA"; fi
  unset ICEBERG_REST_PID ICEBERG_REST_DATA EXPORTER_TEST_REST_URI EXPORTER_TEST_REST_WAREHOUSE
}
