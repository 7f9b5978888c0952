#!/bin/sh
# Makes the cluster in $PGDATA on the first start (POSTGRES_USER, default postgres, with
# POSTGRES_PASSWORD; the database POSTGRES_DB, default the user's name), reachable from other
# containers with that password; then runs the command (postgres).
set -eu
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ "${1:-}" = postgres ] && ! [ -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is not set}"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  if [ "$db" != postgres ]; then
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    createdb --username="$user" "$db"
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
fi
[ "${1:-}" = postgres ] && shift && set -- postgres -D "$PGDATA" "$@"
exec "$@"
