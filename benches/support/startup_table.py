"""The table benches/startup.sh prints: each command's median wall time, its CPU (user + system,
the command and its children), its ratio to `flock FILE true` from the same run, and issue 35's
targets checked against those figures.

Usage: startup_table.py TIMES_JSON STATIC NATIVE LOCKFILE ONE_MASTER FIVE_MASTERS
(hyperfine's --export-json, then the strings to shorten in the command names)."""

import json
import statistics
import sys

times, static, native, lockfile, one, five = sys.argv[1:7]
results = json.load(open(times))["results"]


def short(command):
    # Longest first: the five masters' options contain the first master's.
    for text, name in [(five, "(5 masters)"), (one, "(1 master)"), (static, "redlock[static]"),
                       (native, "redlock[native]"), (lockfile, "FILE")]:
        command = command.replace(text, name)
    return " ".join(command.split())


median = {}
print(f"{'command':62} {'median':>9} {'x flock':>8} {'user+sys':>9}")
flock = statistics.median(next(r for r in results if r["command"].startswith("flock"))["times"])
for r in results:
    name = short(r["command"])
    median[name] = statistics.median(r["times"])
    print(f"{name:62} {median[name] * 1000:7.3f}ms {median[name] / flock:8.2f} "
          f"{(r['user'] + r['system']) * 1000:7.3f}ms")


def run(build, masters):
    return median[f"redlock[{build}] run {masters} --key bench --ttl 10s -- true"]


print()
print("issue 35's targets (medians of this run):")
for build in ("static", "native"):
    checks = [
        (f"run -- true, 1 master, {build}: x flock <= 1.5", run(build, "(1 master)") / flock, 1.5),
        (f"run -- true, 5 masters, {build}: x flock <= 1.7", run(build, "(5 masters)") / flock, 1.7),
        (f"--version - true, {build}: <= 0.3 ms",
         (median[f"redlock[{build}] --version"] - median["true"]) * 1000, 0.3),
    ]
    for what, value, limit in checks:
        print(f"  {what:52} {value:7.2f}  {'met' if value <= limit else 'NOT MET'}")
