#!/usr/bin/env bash
# What one section costs, whole process (issue 35): `true`, `flock FILE true`, `redlock
# --version` and `redlock run -- true` on one and on five local masters, for the static (musl:
# the archive's, the image's) and the native (glibc: the .deb's) release builds, timed side by
# side by hyperfine, with their ratios to flock and issue 35's targets. With --profile, also
# where the CPU time of `redlock run -- true` goes, from a perf profile with DWARF call graphs
# of a release build with symbols, put into buckets by benches/support/where_time_goes.py.
# The figures in BENCHMARKS.md ("Where a section's time goes") and docs/performance.md come
# from this script; `scripts/bench startup` runs it.
#
# Usage: benches/startup.sh [--profile] [RUNS]   (default 300 runs per command)
#
# Starts its own five redis-servers on loopback ports below 32768 and stops them on exit.
# Needs hyperfine, flock, redis-server and python3 (perf too with --profile); builds what it
# measures (two release builds, three with --profile: minutes, once).
set -euo pipefail
cd "$(dirname "$0")/.."

profile=""
if [ "${1:-}" = --profile ]; then
  profile=1
  shift
fi
runs=${1:-300}
needed="hyperfine flock redis-server redis-cli python3${profile:+ perf}"
for tool in $needed; do
  command -v "$tool" >/dev/null || { echo "startup.sh: $tool is missing; install it (apt-get install hyperfine util-linux redis-server python3 linux-perf)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/redlock-startup.XXXXXX")
base=$((20000 + RANDOM % 10000))
ports=("$base" $((base + 1)) $((base + 2)) $((base + 3)) $((base + 4)))
cleanup() {
  for port in "${ports[@]}"; do
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
servers=""
for port in "${ports[@]}"; do
  mkdir -p "$work/$port"
  redis-server --port "$port" --bind 127.0.0.1 --save "" --daemonize yes --dir "$work/$port" \
    --logfile "$work/$port/redis.log" >/dev/null
  servers="$servers -s redis://127.0.0.1:$port"
done
one="-s redis://127.0.0.1:${ports[0]}"

cargo build --release --locked --bin redlock >&2
native=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release/redlock
static=$(scripts/build-static)
for port in "${ports[@]}"; do
  until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done
done

lockfile="$work/flock"
touch "$lockfile"
hyperfine -N --warmup 50 --runs "$runs" --export-json "$work/times.json" \
  true "flock $lockfile true" \
  "$static --version" "$native --version" \
  "$static run $one --key bench --ttl 10s -- true" "$native run $one --key bench --ttl 10s -- true" \
  "$static run $servers --key bench --ttl 10s -- true" \
  "$native run $servers --key bench --ttl 10s -- true" >&2
python3 benches/support/startup_table.py "$work/times.json" "$static" "$native" "$lockfile" \
  "$one" "$servers"

[ -n "$profile" ] || exit 0
# The same release build with symbols, for the profile (its own directory: a build with other
# settings would otherwise replace the release build's artifacts).
CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
  cargo build --release --locked --bin redlock --target-dir target-profile >&2
profiled=target-profile/release/redlock
perf record -q -F 10000 --call-graph dwarf,16384 -o "$work/perf.data" -- \
  sh -c "for i in \$(seq 60); do $profiled run $one --key bench --ttl 10s -- true; done" 2>/dev/null
perf script -i "$work/perf.data" -F comm,pid,tid,ip,sym 2>/dev/null >"$work/perf.txt"
echo
echo "where the CPU time of \`redlock run -- true\` goes (native build):"
python3 benches/support/where_time_goes.py "$work/perf.txt"
