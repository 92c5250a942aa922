//! Hand-offs over many runs (issue 23): P processes take turns on ONE key, S critical sections
//! each, R times in a row, with `redlock run` over 5 local masters and `flock(1)` on one file
//! interleaved run by run, so that each ratio compares figures taken in the same minute. The
//! spread between runs is the point: a lost wake-up shows as a run that stalls.
//!
//! Each process is a thread standing in for a looping shell script (`support/sections.rs`),
//! running `redlock -v --log-format json run --key K --ttl 10s --wait 300s -- bash -c SECTION`
//! or `flock FILE bash -c SECTION`; the section logs its start and end, and the bench panics if
//! two overlapped. redlock's stderr goes to a file per process, and the bench reads back the
//! `acquired` events of turns in the queue: what started the turn that took the lock (`cause`:
//! joined, notice, heartbeat, backoff; a heartbeat is a lost wake-up).
//!
//! Prints, per shape and run, `wakeups shape=4x25 run=1 redlock_ms=… flock_ms=… ratio=…
//! max_gap_ms=… gaps_over_150ms=… joined=… notice=… heartbeat=… backoff=…`; then per shape a
//! `wakeups-summary` line: the ratio's min, median and max, the slowest run over the fastest
//! (redlock), the longest gap of all runs and how many exceeded 150 ms, the causes summed, and
//! the load average and CPU use before and after. Then a markdown table for BENCHMARKS.md.
//!
//! Usage: `cargo bench --bench wakeups [-- [--runs R] PxS...]` (default: 10 runs of 4x25 and of
//! 64x5). Without `--bench` (`cargo test --benches`): one run of 2x2, as a smoke test.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/machine.rs"]
mod machine;
#[path = "support/sections.rs"]
mod sections;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::Cluster;
use machine::{cpu_busy_percent, loadavg};
use sections::{CRITICAL_SECTION, handoff_gaps, percentile, run_workers};

/// A gap between two sections longer than this is a stall (issue 23's target).
const STALL_MS: f64 = 150.0;

/// The causes, in the order they are printed.
const CAUSES: [&str; 4] = ["joined", "notice", "heartbeat", "backoff"];

/// One run of one shape.
struct Measured {
    redlock_ms: f64,
    flock_ms: f64,
    max_gap_ms: f64,
    stalls: usize,
    causes: BTreeMap<String, usize>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes --bench; `cargo test --benches` does not, and gets a smoke test.
    let benchmarking = args.iter().any(|arg| arg == "--bench");
    let mut runs = if benchmarking { 10 } else { 1 };
    let mut shapes: Vec<(usize, usize)> = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--runs" {
            runs = args
                .next()
                .and_then(|n| n.parse().ok())
                .expect("--runs takes a number of runs");
        } else if let Some((p, s)) = arg.split_once('x') {
            let shape = p.parse().ok().zip(s.parse().ok());
            shapes.push(shape.expect("a shape is PROCESSESxSECTIONS, e.g. 4x25"));
        }
    }
    if shapes.is_empty() {
        shapes = if benchmarking {
            vec![(4, 25), (64, 5)]
        } else {
            vec![(2, 2)]
        };
    }
    // Started on the main thread: the servers die with the thread that spawned them.
    let cluster = Cluster::start(5);
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut table = Vec::new();
    for &(procs, sections) in &shapes {
        let before = (loadavg(), cpu_busy_percent(Duration::from_secs(1)));
        let measured: Vec<Measured> = (1..=runs)
            .map(|run| {
                let dir = tmp.path().join(format!("{procs}x{sections}-{run}"));
                std::fs::create_dir(&dir).expect("run dir");
                let m = measure(&cluster, &dir, procs, sections);
                let causes: Vec<String> = CAUSES
                    .iter()
                    .map(|c| format!("{c}={}", m.causes.get(*c).copied().unwrap_or(0)))
                    .collect();
                println!(
                    "wakeups shape={procs}x{sections} run={run} redlock_ms={:.1} flock_ms={:.1} \
                     ratio={:.2} max_gap_ms={:.1} gaps_over_150ms={} {}",
                    m.redlock_ms,
                    m.flock_ms,
                    m.redlock_ms / m.flock_ms,
                    m.max_gap_ms,
                    m.stalls,
                    causes.join(" ")
                );
                m
            })
            .collect();
        let after = (loadavg(), cpu_busy_percent(Duration::from_secs(1)));
        table.push(summary(procs, sections, &measured, before, after));
    }
    println!();
    println!(
        "| shape | runs | redlock / flock min | median | max | slowest / fastest run | \
         longest gap | gaps > 150 ms | turns by cause (joined, notice, heartbeat, backoff) | \
         load before / after |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---|---|");
    for row in table {
        println!("{row}");
    }
}

/// One run: redlock, then flock, same shape.
fn measure(cluster: &Cluster, dir: &Path, procs: usize, sections: usize) -> Measured {
    let key = format!("bench-wakeups-{procs}x{sections}");
    let errors = AtomicUsize::new(0);
    let redlock = || {
        let mut cmd = cluster.redlock();
        let n = errors.fetch_add(1, Ordering::SeqCst);
        let stderr = File::create(dir.join(format!("redlock-{n}.json"))).expect("stderr file");
        cmd.args(["-v", "--log-format", "json", "run", "--key", &key])
            .args(["--ttl", "10s", "--wait", "300s", "--"])
            .args(["bash", "-c", CRITICAL_SECTION])
            .stderr(stderr);
        cmd
    };
    let run = run_workers(dir, "redlock", procs, sections, redlock);
    let gaps = handoff_gaps(&run.sections);
    let lock_file = dir.join("flock");
    let flock = || {
        let mut cmd = Command::new("flock");
        cmd.arg(&lock_file).args(["bash", "-c", CRITICAL_SECTION]);
        cmd
    };
    let flocked = run_workers(dir, "flock", procs, sections, flock);
    let ms = |ns: u64| ns as f64 / 1e6;
    Measured {
        redlock_ms: run.wall.as_secs_f64() * 1e3,
        flock_ms: flocked.wall.as_secs_f64() * 1e3,
        max_gap_ms: gaps.last().map_or(0.0, |g| ms(*g)),
        stalls: gaps.iter().filter(|g| ms(**g) > STALL_MS).count(),
        causes: causes(dir),
    }
}

/// What started each turn that took the lock, from every redlock's `acquired` events.
fn causes(dir: &Path) -> BTreeMap<String, usize> {
    let mut causes = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("run dir") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("stderr file");
        for line in text.lines() {
            let event: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {line}", path.display()));
            if event["event"] == "acquired" && event["outcome"] == "turn" {
                // (A redlock from before issue 23 does not say: "unknown".)
                let cause = event["cause"].as_str().unwrap_or("unknown").to_string();
                *causes.entry(cause).or_insert(0) += 1;
            }
        }
    }
    causes
}

/// The summary line, printed, and the markdown row returned.
fn summary(
    procs: usize,
    sections: usize,
    measured: &[Measured],
    before: (String, f64),
    after: (String, f64),
) -> String {
    let mut ratios: Vec<f64> = measured.iter().map(|m| m.redlock_ms / m.flock_ms).collect();
    ratios.sort_by(f64::total_cmp);
    let walls: Vec<f64> = measured.iter().map(|m| m.redlock_ms).collect();
    let spread =
        walls.iter().copied().fold(0.0, f64::max) / walls.iter().copied().fold(f64::MAX, f64::min);
    let longest = measured.iter().map(|m| m.max_gap_ms).fold(0.0, f64::max);
    let stalls: usize = measured.iter().map(|m| m.stalls).sum();
    let total = |cause: &str| -> usize {
        measured
            .iter()
            .map(|m| m.causes.get(cause).copied().unwrap_or(0))
            .sum()
    };
    let causes: Vec<String> = CAUSES.iter().map(|c| total(c).to_string()).collect();
    let (min, median, max) = (
        ratios[0],
        percentile(&ratios, 0.5),
        ratios[ratios.len() - 1],
    );
    println!(
        "wakeups-summary shape={procs}x{sections} runs={} ratio_min={min:.2} ratio_median={median:.2} \
         ratio_max={max:.2} slowest_over_fastest={spread:.2} longest_gap_ms={longest:.1} \
         gaps_over_150ms={stalls} {} loadavg_before={} cpu_busy_before_pct={:.0} \
         loadavg_after={} cpu_busy_after_pct={:.0}",
        measured.len(),
        CAUSES
            .iter()
            .zip(&causes)
            .map(|(c, n)| format!("{c}={n}"))
            .collect::<Vec<_>>()
            .join(" "),
        before.0,
        before.1,
        after.0,
        after.1
    );
    format!(
        "| {procs} x {sections} | {} | {min:.2}x | {median:.2}x | {max:.2}x | {spread:.2}x | \
         {longest:.0} ms | {stalls} | {} | {} ({:.0}% busy) / {} ({:.0}% busy) |",
        measured.len(),
        causes.join(", "),
        before.0,
        before.1,
        after.0,
        after.1
    )
}
