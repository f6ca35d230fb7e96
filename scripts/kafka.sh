# Sourced by scripts/test.sh: installs the Apache Kafka broker
# (org.apache.kafka:kafka_2.13 and its runtime dependencies, from Maven
# Central through mvn) into a cache folder outside the repository, once per
# version, and starts it in KRaft mode (one process that is both broker and
# controller) on a free 127.0.0.1 port with a throw-away data folder.
# Needs a JDK 17 and mvn on the PATH.
KAFKA_VERSION=4.4.0
TOOLS_CACHE=${EXPORTER_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lakehouse-exporter}
KAFKA_HOME=$TOOLS_CACHE/kafka-$KAFKA_VERSION
# Maven's own downloads (the dependency plugin and the jars it resolves)
# stay in the cache too, so that removing the cache removes everything.
TOOLS_M2=$TOOLS_CACHE/m2

kafka_install() {
  if [ -f "$KAFKA_HOME/.complete" ]; then return 0; fi
  echo "installing Apache Kafka $KAFKA_VERSION from Maven Central into $KAFKA_HOME..."
  rm -rf "$KAFKA_HOME"
  mkdir -p "$KAFKA_HOME"
  cat >"$KAFKA_HOME/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>lakehouse-exporter.test</groupId>
  <artifactId>kafka-broker</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
    <!-- The broker logs through SLF4J 2; the distribution ships Log4j 2
         behind it (Maven alone would pick an SLF4J 1.7 from a transitive
         dependency, which the Log4j binding cannot serve). -->
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-api</artifactId>
      <version>2.0.17</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j2-impl</artifactId>
      <version>2.24.3</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>2.24.3</version>
    </dependency>
  </dependencies>
</project>
EOF
  (cd "$KAFKA_HOME" && mvn -B -q -Dmaven.repo.local="$TOOLS_M2" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$KAFKA_HOME/libs") </dev/null
  cat >"$KAFKA_HOME/log4j2.properties" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = out
logger.kafka.name = kafka.server.KafkaRaftServer
logger.kafka.level = INFO
EOF
  touch "$KAFKA_HOME/.complete"
}

kafka_java() {
  java -Xms256m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dlog4j2.configurationFile="$KAFKA_HOME/log4j2.properties" \
    -cp "$KAFKA_HOME/libs/*" "$@"
}

kafka_start() {
  kafka_install
  KAFKA_DATA=$(mktemp -d)
  local port controller
  port=$(go run ./tools/freeport)
  controller=$(go run ./tools/freeport)
  # Settings for one broker: replication 1 everywhere (offsets and
  # transaction state included), no delay before the first rebalance so
  # that group tests do not wait the default 3 s, and quick session
  # bounds so that a killed member leaves its group within seconds.
  cat >"$KAFKA_DATA/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$KAFKA_DATA/logs
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=1000
log.flush.interval.messages=9223372036854775807
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
EOF
  local cluster
  cluster=$(kafka_java kafka.tools.StorageTool random-uuid)
  kafka_java kafka.tools.StorageTool format -t "$cluster" -c "$KAFKA_DATA/server.properties" \
    >"$KAFKA_DATA/format.log" 2>&1 || { cat "$KAFKA_DATA/format.log" >&2; return 1; }
  kafka_java kafka.Kafka "$KAFKA_DATA/server.properties" >"$KAFKA_DATA/kafka.log" 2>&1 &
  KAFKA_PID=$!
  # The broker logs this line once it serves clients.
  local i
  for i in $(seq 1 360); do
    if grep -q 'Kafka Server started' "$KAFKA_DATA/kafka.log"; then break; fi
    if ! kill -0 "$KAFKA_PID" 2>/dev/null; then break; fi
    sleep 0.25
  done
  if grep -q 'Kafka Server started' "$KAFKA_DATA/kafka.log"; then
    export EXPORTER_TEST_KAFKA_BROKERS="127.0.0.1:$port"
    echo "Kafka $KAFKA_VERSION ready at $EXPORTER_TEST_KAFKA_BROKERS"
    return 0
  fi
  echo "Kafka did not become ready; its log:" >&2
  cat "$KAFKA_DATA/kafka.log" >&2
  return 1
}

kafka_stop() {
  if [ -n "${KAFKA_PID:-}" ]; then kill "$KAFKA_PID" 2>/dev/null; wait "$KAFKA_PID" 2>/dev/null || true; fi
  if [ -n "${KAFKA_DATA:-}" ]; then rm -rf "$KAFKA_DATA"; fi
  unset KAFKA_PID KAFKA_DATA
}
