#!/bin/sh
# Installs the chat servers the `send-peers` benchmark measures svc against (Debian packages):
# ejabberd with its PostgreSQL driver (its MUC archive on PostgreSQL) and Prosody with mod_muc_mam on SQLite through
# LuaDBI. The benchmark starts each as a child process with a configuration of its own, so the
# packages' system services are neither needed nor started here. Called by nothing in CI:
# `sh bench/peers/install.sh` as root (or through sudo) on a machine that runs the benchmark.
set -eu
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
# A container's /usr/sbin/policy-rc.d (exit 101) keeps the services from starting at install;
# without one, stop them afterwards: the benchmark runs its own.
as_root apt-get update
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  ejabberd erlang-p1-pgsql prosody lua-dbi-sqlite3
for service in ejabberd prosody; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$service"; then
    as_root systemctl stop "$service" || true
  fi
done
echo "installed: $(dpkg-query -W -f='${Package} ${Version}, ' ejabberd erlang-p1-pgsql prosody lua-dbi-sqlite3)"
