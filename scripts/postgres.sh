# Sourced by test scripts: starts a throw-away PostgreSQL cluster (the
# server installed on the machine) on a free loopback port, with its data
# in a temporary folder owned by the postgres user, and exports
# EXPORTER_TEST_POSTGRES_DSN for the Iceberg SQL catalog tests.
# postgres_stop stops it and removes the folder.
PG_BIN=${EXPORTER_PG_BIN:-/usr/lib/postgresql/15/bin}

# pg_run runs a PostgreSQL command as the postgres user when we are root
# (the server refuses to run as root), as ourselves otherwise.
pg_run() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

postgres_start() {
  if [ ! -x "$PG_BIN/initdb" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing PostgreSQL 15 from Debian's packages..."
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null
  fi
  if [ ! -x "$PG_BIN/initdb" ]; then
    echo "PostgreSQL is not installed at $PG_BIN (apt-get install postgresql, or set EXPORTER_PG_BIN)" >&2
    return 1
  fi
  PG_DIR=$(mktemp -d)
  if [ "$(id -u)" = 0 ]; then chown postgres: "$PG_DIR"; fi
  local port
  port=$(go run ./tools/freeport)
  pg_run "$PG_BIN/initdb" -A trust -U exporter -D "$PG_DIR/data" >"$PG_DIR/initdb.log" 2>&1 || {
    echo "initdb failed; its log:" >&2; cat "$PG_DIR/initdb.log" >&2; return 1
  }
  # Loopback only, and the socket in the cluster's own folder.
  if pg_run "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $PG_DIR -c fsync=off" start >/dev/null; then
    export EXPORTER_TEST_POSTGRES_DSN="postgres://exporter@127.0.0.1:$port/postgres?sslmode=disable"
    echo "PostgreSQL ready at 127.0.0.1:$port"
    return 0
  fi
  echo "PostgreSQL did not start; its log:" >&2
  cat "$PG_DIR/postgres.log" >&2
  return 1
}

postgres_stop() {
  if [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR/data" ]; then
    pg_run "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
  fi
  if [ -n "${PG_DIR:-}" ]; then rm -rf "$PG_DIR"; fi
  unset EXPORTER_TEST_POSTGRES_DSN
}
