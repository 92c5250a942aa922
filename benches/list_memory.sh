#!/usr/bin/env bash
# Peak memory (max RSS), wall time and CPU time (redlock's own, user + system) of `redlock list`
# over many locks, each with its holder record, on 1 and on 3 masters, as text and as JSON
# (issue 22, item 8). The figures in BENCHMARKS.md ("`list` over 100,000 locks") come from
# this script.
#
# Usage: benches/list_memory.sh [REDLOCK_BINARY] [LOCKS]
#   REDLOCK_BINARY  the binary to measure (default: target/release/redlock; build it first with
#                   `cargo build --release`); give an older build's binary to compare
#   LOCKS           how many locks to write on each master (default: 100000)
#
# Starts its own redis-servers on loopback ports below 32768 (no persistence) and stops them on
# exit. Needs redis-server, redis-cli and GNU time (/usr/bin/time). Each run is checked to have
# listed every lock, so a figure is never that of an incomplete report.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-target/release/redlock}
locks=${2:-100000}
for tool in redis-server redis-cli /usr/bin/time "$bin"; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "list_memory: $tool not found (apt-get install redis-server time; cargo build --release)" >&2
    exit 69
  }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/redlock-list-bench.XXXXXX")
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Three servers on random loopback ports in 20000-29999.
ports=()
base=$((20000 + RANDOM % 9000))
for i in 0 1 2; do
  port=$((base + i * 311))
  mkdir -p "$work/$port"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work/$port" \
    --logfile "$work/$port/log" >/dev/null &
  pids+=($!)
  ports+=("$port")
done
for port in "${ports[@]}"; do
  for _ in $(seq 100); do
    redis-cli -p "$port" PING >/dev/null 2>&1 && break
    sleep 0.1
  done
done

# Every lock as redlock writes it: the key holding a token, and beside it the holder record
# naming that token, both with a 10-minute TTL (RESP, through redis-cli --pipe).
now_ms=$(($(date +%s) * 1000))
awk -v n="$locks" -v now="$now_ms" 'function bulk(s) { printf "$%d\r\n%s\r\n", length(s), s }
  BEGIN {
    for (i = 0; i < n; i++) {
      key = sprintf("bench-lock-%07d", i)
      token = sprintf("%032x", i * 7919 + 1)
      record = sprintf("{\"command\":\"./nightly-job.sh --part %d\",\"host\":\"bench-host\",\"pid\":%d,\"since_ms\":%d,\"token\":\"%s\",\"user\":\"bench\"}", i, 1000 + i % 30000, now, token)
      printf "*5\r\n"; bulk("SET"); bulk(key); bulk(token); bulk("PX"); bulk("600000")
      printf "*5\r\n"; bulk("SET"); bulk("__redlock:{" key "}:holder:" key); bulk(record); bulk("PX"); bulk("600000")
    }
  }' >"$work/locks.resp"
for port in "${ports[@]}"; do
  redis-cli -p "$port" --pipe <"$work/locks.resp" >/dev/null
done

echo "redlock list over $locks locks with holder records ($("$bin" --version))"
printf '%-8s %-6s %12s %10s %10s\n' masters format "max RSS MB" "time s" "CPU s"
for masters in 1 3; do
  servers=$(for port in "${ports[@]:0:$masters}"; do printf 'redis://127.0.0.1:%s ' "$port"; done)
  for format in text json; do
    flag=""
    [ "$format" = json ] && flag="--json"
    REDLOCK_SERVERS="$servers" /usr/bin/time -v "$bin" list --timeout 300s $flag \
      >"$work/out" 2>"$work/time" || { cat "$work/time" >&2; exit 1; }
    if [ "$format" = json ]; then
      listed=$(grep -o '"verdict":"held"' "$work/out" | wc -l)
    else
      listed=$(grep -c '^lock "bench-lock-.*" is held by' "$work/out")
    fi
    [ "$listed" -eq "$locks" ] || {
      echo "list_memory: only $listed of $locks locks listed ($masters masters, $format)" >&2
      exit 1
    }
    rss_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$work/time")
    seconds=$(echo "$wall" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$work/time")
    printf '%-8s %-6s %12.1f %10.2f %10.2f\n' "$masters" "$format" \
      "$(awk -v k="$rss_kb" 'BEGIN { print k / 1024 }')" "$seconds" "$cpu"
  done
done
