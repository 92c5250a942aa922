#!/usr/bin/env bash
# What a master's CPU is made of (issue 35, item 3): one local redis-server, driven one request
# at a time by benches/support/master_costs.py, its CPU read from /proc around each batch.
# Prints, in microseconds of the master's CPU each: a request (PING), a script by EVALSHA with
# nothing to do, the same with the 15 keys and 8 arguments of a waiter's turn, the cost of
# 16 commands inside a script, a script's body on the wire (EVAL against EVALSHA), a
# connection, and a subscription that receives one notice.
# Usage: benches/master_costs.sh [CALLS [ROUNDS]]   (defaults 2000 and 5: about a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-2000}
rounds=${2:-5}
for tool in redis-server redis-cli python3; do
  command -v "$tool" >/dev/null || { echo "master_costs.sh: $tool is missing; install it (apt-get install redis-server python3)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/redlock-master-costs.XXXXXX")
port=$((20000 + RANDOM % 10000))
redis-server --port "$port" --save '' --appendonly no --dir "$work" --logfile "$work/redis.log" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
# The queue's shared Lua as a script sends it (src/lock/wire/lua.rs: no indentation, comment
# or blank line), all of its functions: about the size of the largest script's.
awk '/^pub\(in crate::lock\) const FUNCTIONS: &str = r"$/ { on = 1; next } on && /^";$/ { on = 0 } on' \
  src/lock/scripts/queue_lua.rs | sed -e 's/^ *//' -e '/^--/d' -e '/^$/d' >"$work/functions.lua"
echo "master-costs calls=$calls rounds=$rounds loadavg=$(cut -d' ' -f1 /proc/loadavg) redis=$(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"
python3 benches/support/master_costs.py "$port" "$pid" "$calls" "$rounds" "$work/functions.lua"
