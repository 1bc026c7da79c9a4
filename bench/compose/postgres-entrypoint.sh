#!/bin/sh
# Entrypoint of the postgres:16 stand-in (postgres.Dockerfile). First start on an empty $PGDATA:
# initdb with POSTGRES_USER (default postgres) as superuser and POSTGRES_PASSWORD, TCP on every
# interface with scram-sha-256, then CREATE DATABASE POSTGRES_DB (default: the user's name). The
# set-up server listens on a private socket only, so the healthcheck does not pass before it ends.
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
if [ "${1:-}" = postgres ]; then
  shift
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    user=${POSTGRES_USER:-postgres}
    db=${POSTGRES_DB:-$user}
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
      echo "docker-entrypoint: POSTGRES_PASSWORD is not set" >&2
      exit 1
    fi
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" --encoding=UTF8 \
      --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
    if [ "$db" != postgres ]; then
      sock=$(mktemp -d)
      pg_ctl -D "$PGDATA" -w -o "-c listen_addresses='' -c unix_socket_directories=$sock" start
      psql -v ON_ERROR_STOP=1 -h "$sock" -U "$user" -d postgres \
        -c "CREATE DATABASE \"$db\" OWNER \"$user\""
      pg_ctl -D "$PGDATA" -w -m fast stop
      rmdir "$sock"
    fi
  fi
  exec postgres -D "$PGDATA" "$@"
fi
exec "$@"
