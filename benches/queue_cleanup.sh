#!/usr/bin/env bash
# How long one script call blocks a master whose fair queue a foreign client filled with places
# that have no lease (issue 22, item 3): the server-side time of one ACQUIRE, from INFO commandstats.
# Usage: benches/queue_cleanup.sh [REDLOCK_BINARY] [PLACES...]
#   defaults: target/release/redlock (else target/debug/redlock), 100000 and 1000000 places.
# Starts its own redis-server on a loopback port and stops it on exit. Prints one line per size:
# the places before and after the call, and the call's time on the master in microseconds.
set -euo pipefail
cd "$(dirname "$0")/.."
redlock=${1:-}
if [ -z "$redlock" ]; then
  redlock=target/release/redlock
  [ -x "$redlock" ] || redlock=target/debug/redlock
fi
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000)

port=$((20000 + RANDOM % 10000))
work=$(mktemp -d "${TMPDIR:-/tmp}/redlock-cleanup.XXXXXX")
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  --daemonize yes --pidfile "$work/redis.pid" --logfile "$work/redis.log"
cli() { redis-cli -p "$port" "$@"; }
# Stopped by SHUTDOWN, which returns once the server is gone, so that its directory can go.
trap 'cli shutdown nosave >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
until cli ping >/dev/null 2>&1; do sleep 0.05; done

key=k
queue="__redlock:{$key}:queue:$key"
fill='for i = 1, tonumber(ARGV[1]) do redis.call("ZADD", KEYS[1], 0, "foreign-" .. i) end
redis.call("PEXPIRE", KEYS[1], 600000)'
for size in "${sizes[@]}"; do
  cli del "$key" "$queue" >/dev/null
  cli eval "$fill" 1 "$queue" "$size" >/dev/null
  cli config resetstat >/dev/null
  REDLOCK_SERVERS="redis://127.0.0.1:$port" "$redlock" acquire --key "$key" --ttl 10s \
    --wait 0 >/dev/null 2>&1 || true
  # redlock gives up after its node timeout; a longer script still runs: wait for it.
  until [ "$(cli ping 2>&1)" = PONG ]; do sleep 0.1; done
  # The script's own time on the master (the commands it ran included): the usec of EVAL and
  # EVALSHA in INFO commandstats, reset just before. (SLOWLOG would log every command the
  # script runs, and slow it down.)
  micros=$(cli info commandstats | tr -d '\r' | awk -F'[=,]' '
    /^cmdstat_(eval|evalsha):/ { usec += $4 } END { print usec + 0 }')
  left=$(cli zcard "$queue")
  echo "places $size -> $left: one call took ${micros} us on the master"
done
