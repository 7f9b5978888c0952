#!/usr/bin/env bash
# A PostgreSQL of the bench's own with pg_stat_statements loaded, to see where the database's CPU
# of a scenario goes, statement by statement (docs/performance.md, "One send on PostgreSQL").
# The machine's PostgreSQL is left as it is: this one runs from Debian's PostgreSQL 15 binaries
# on port 5433, in a directory under /tmp, as the user postgres, with the machine's defaults
# (shared_buffers 128MB, fsync and synchronous_commit on).
#
#   bash bench/tools/pg-statements-cluster.sh start
#   SVC_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5433/postgres npm run bench -- send --pg
#   bash bench/tools/pg-statements-cluster.sh stop
#
# With the extension in the bench's database, `send --pg` prints the statements of its measured
# phases (bench/lib/pg-statements.ts). BENCH_PG_EXPLAIN=<fraction> also logs the plan of that
# fraction of the statements, with each node's and trigger's time (auto_explain), to
# $BENCH_PG_STATS_DIR/log.
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
dir=${BENCH_PG_STATS_DIR:-/tmp/svc-bench-pg-stats}
port=${BENCH_PG_STATS_PORT:-5433}
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "${1:-}" in
  start)
    if [ ! -f "$dir/PG_VERSION" ]; then
      mkdir -p "$dir"
      [ "$(id -u)" = 0 ] && chown postgres "$dir"
      as_pg "$bin/initdb" -D "$dir" -A trust -U postgres >/dev/null
    fi
    opts="-p $port -k $dir -c listen_addresses=127.0.0.1 -c pg_stat_statements.track=all \
      -c pg_stat_statements.max=2000"
    if [ -n "${BENCH_PG_EXPLAIN:-}" ]; then
      opts="$opts -c shared_preload_libraries=pg_stat_statements,auto_explain \
        -c auto_explain.log_min_duration=0 -c auto_explain.log_analyze=on \
        -c auto_explain.log_triggers=on \
        -c auto_explain.sample_rate=$BENCH_PG_EXPLAIN"
    else
      opts="$opts -c shared_preload_libraries=pg_stat_statements"
    fi
    as_pg "$bin/pg_ctl" -D "$dir" -l "$dir/log" -w start -o "$opts" >/dev/null
    as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc \
      'create extension if not exists pg_stat_statements'
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    as_pg "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
