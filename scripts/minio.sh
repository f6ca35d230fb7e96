# Sourced by scripts/test.sh: builds MinIO from the Go module proxy into a
# cache folder outside the repository (once per version) and starts it on
# 127.0.0.1 with a throw-away data folder. MinIO is AGPL: it runs as a
# separate process and none of its code is imported.
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
TOOLS_CACHE=${EXPORTER_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lakehouse-exporter}
MINIO_BIN=$TOOLS_CACHE/minio-$MINIO_VERSION/minio

minio_build() {
  if [ -x "$MINIO_BIN" ]; then return 0; fi
  echo "building MinIO $MINIO_VERSION into $(dirname "$MINIO_BIN") (a cold build takes a few minutes)..."
  mkdir -p "$(dirname "$MINIO_BIN")"
  (cd "$(mktemp -d)" && GOBIN="$(dirname "$MINIO_BIN")" GOFLAGS= go install "github.com/minio/minio@$MINIO_VERSION")
}

minio_start() {
  minio_build
  MINIO_DATA=$(mktemp -d)
  local port console
  port=$(go run ./tools/freeport)
  console=$(go run ./tools/freeport)
  export MINIO_ROOT_USER=exporter-test
  export MINIO_ROOT_PASSWORD=exporter-test-secret
  "$MINIO_BIN" server "$MINIO_DATA/data" --address "127.0.0.1:$port" --console-address "127.0.0.1:$console" --quiet \
    >"$MINIO_DATA/minio.log" 2>&1 &
  MINIO_PID=$!
  if go run ./tools/waitready "http://127.0.0.1:$port/minio/health/ready" 90s; then
    export EXPORTER_TEST_S3_ENDPOINT="http://127.0.0.1:$port"
    export EXPORTER_TEST_S3_ACCESS_KEY=$MINIO_ROOT_USER
    export EXPORTER_TEST_S3_SECRET_KEY=$MINIO_ROOT_PASSWORD
    export EXPORTER_TEST_MINIO_BIN=$MINIO_BIN
    echo "MinIO ready at $EXPORTER_TEST_S3_ENDPOINT"
    return 0
  fi
  echo "MinIO did not become ready; its log:" >&2
  cat "$MINIO_DATA/minio.log" >&2
  return 1
}

minio_stop() {
  if [ -n "${MINIO_PID:-}" ]; then kill "$MINIO_PID" 2>/dev/null; wait "$MINIO_PID" 2>/dev/null; fi
  if [ -n "${MINIO_DATA:-}" ]; then rm -rf "$MINIO_DATA"; fi
}
