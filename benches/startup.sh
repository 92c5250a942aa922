#!/usr/bin/env bash
# What one section costs, whole process (issue 35, item 1): `true`, `flock FILE true`,
# `redlock --version` and `redlock run -- true` on one local master, for the native (glibc) and
# the static (musl) release builds, timed side by side by hyperfine; then where the CPU time of
# `redlock run -- true` goes, from a perf profile with DWARF call graphs of a release build with
# symbols, put into buckets by benches/support/where_time_goes.py. The figures in BENCHMARKS.md
# ("Where a section's time goes") come from this script.
#
# Usage: benches/startup.sh [RUNS]   (default 300 runs per command)
#
# Starts its own redis-server on a loopback port below 32768 and stops it on exit. Needs
# hyperfine, perf and flock; builds what it measures (three release builds: minutes, once).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-300}
for tool in hyperfine perf flock redis-server python3; do
  command -v "$tool" >/dev/null || { echo "startup.sh: $tool is missing; install it (apt-get install hyperfine linux-perf util-linux redis-server python3)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/redlock-startup.XXXXXX")
port=$((20000 + RANDOM % 10000))
cleanup() {
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
redis-server --port "$port" --bind 127.0.0.1 --save "" --daemonize yes --dir "$work" \
  --logfile "$work/redis.log" >/dev/null
export REDLOCK_SERVERS="redis://127.0.0.1:$port"

cargo build --release --locked --bin redlock >&2
native=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release/redlock
static=$(scripts/build-static)
# The same release build with symbols, for the profile (its own directory: a build with other
# settings would otherwise replace the release build's artifacts).
CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
  cargo build --release --locked --bin redlock --target-dir target-profile >&2
profiled=target-profile/release/redlock
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done

lockfile="$work/flock"
touch "$lockfile"
hyperfine -N --warmup 50 --runs "$runs" --export-json "$work/times.json" \
  true "flock $lockfile true" \
  "$native --version" "$static --version" \
  "$native run --key bench --ttl 10s -- true" "$static run --key bench --ttl 10s -- true" >&2
python3 - "$work/times.json" "$native" "$static" "$lockfile" <<'PY'
import json, statistics, sys
results = json.load(open(sys.argv[1]))["results"]
names = {sys.argv[2]: "redlock (native)", sys.argv[3]: "redlock (static)", sys.argv[4]: "FILE"}
flock = statistics.median(next(r for r in results if r["command"].startswith("flock"))["times"])
print(f"{'command':62} {'median':>9} {'x flock':>8} {'user+sys':>9}")
for r in results:
    median = statistics.median(r["times"])
    name = r["command"]
    for path, short in names.items():
        name = name.replace(path, short)
    print(f"{name:62} {median * 1000:7.3f}ms {median / flock:8.2f} "
          f"{(r['user'] + r['system']) * 1000:7.3f}ms")
PY

perf record -q -F 10000 --call-graph dwarf,16384 -o "$work/perf.data" -- \
  sh -c "for i in \$(seq 60); do $profiled run --key bench --ttl 10s -- true; done" 2>/dev/null
perf script -i "$work/perf.data" -F comm,pid,tid,ip,sym 2>/dev/null >"$work/perf.txt"
echo
echo "where the CPU time of \`redlock run -- true\` goes (native build):"
python3 benches/support/where_time_goes.py "$work/perf.txt"
