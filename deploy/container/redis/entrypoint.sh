#!/bin/sh
# redis-server with protected mode off, unless the command sets it: without a password Redis
# would refuse every client but its own host's.
set -eu
if [ "${1:-}" = redis-server ]; then
  case " $* " in
  *" --protected-mode "*) ;;
  *) set -- "$@" --protected-mode no ;;
  esac
fi
exec "$@"
