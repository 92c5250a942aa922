//! Contention: P processes take turns on ONE lock, 25 critical sections each, with `redlock run`
//! over 5 local masters and, for comparison, with `flock(1)` on one file.
//!
//! Every critical section is a tiny bash command that appends its start and end time (bash's
//! builtin `$EPOCHREALTIME`: no extra process, which would add a millisecond to every
//! measurement) to a shared log. From the log this bench reports the total wall time, the
//! throughput, and the process-level hand-off latency: the gap between one section's end and the
//! next one's start (the shell exiting, lock release, the waiter noticing, lock acquisition, and
//! starting the next shell). It also checks that no two sections overlapped, and panics if they
//! did.
//!
//! It then measures the lock's own hand-off, without processes: the same number of contenders
//! as threads, each with its own client (its own connections), doing acquire / release through
//! the library; the hand-off is the time from one holder starting its release to the next holder
//! having the lock.
//!
//! Prints one line per run for `scripts/bench`:
//! `contention tool=redlock procs=4 sections=100 wall_ms=… per_s=… handoff_p50_us=… …`.
//! Usage: `cargo bench --bench contention [-- PROCS...]` (default: 4 8). Without `--bench`
//! (`cargo test --benches`) it only checks, briefly, that the sections do not overlap.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/sections.rs"]
mod sections;

use std::process::Command;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use common::Cluster;
use sections::{CRITICAL_SECTION, Run, handoff_gaps, percentile, run_workers};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes --bench; `cargo test --benches` does not, and gets a smoke test (as
    // criterion does).
    let benchmarking = args.iter().any(|arg| arg == "--bench");
    let per_process = if benchmarking { 25 } else { 2 };
    let mut procs: Vec<usize> = args.iter().filter_map(|arg| arg.parse().ok()).collect();
    if procs.is_empty() {
        procs = if benchmarking { vec![4, 8] } else { vec![2] };
    }

    // Started on the main thread: the servers die with the thread that spawned them.
    let cluster = Cluster::start(5);
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    for &p in &procs {
        let key = format!("bench-contention-{p}");
        let redlock = || {
            let mut cmd = cluster.redlock();
            // --wait: a waiter retries until it gets its turn; the TTL only matters if a
            // holder died, which it does not here.
            cmd.args(["run", "--key", &key, "--ttl", "10s", "--wait", "120s", "--"])
                .args(["bash", "-c", CRITICAL_SECTION]);
            cmd
        };
        report(&run_workers(dir, "redlock", p, per_process, redlock));

        let lock_file = dir.join(format!("flock-{p}"));
        let flock = || {
            let mut cmd = Command::new("flock");
            cmd.arg(&lock_file).args(["bash", "-c", CRITICAL_SECTION]);
            cmd
        };
        report(&run_workers(dir, "flock", p, per_process, flock));
        report_library(&cluster, p, per_process);
    }
}

/// The lock's own hand-off: `procs` threads, each with its own client, take turns on one key.
fn report_library(cluster: &Cluster, procs: usize, per_process: usize) {
    use redlock_cli::lock::{Cancel, History, Kind, Master, Redlock, Request, Timing};
    let key = format!("bench-handoff-{procs}");
    let timing = Timing {
        ttl: Duration::from_secs(10),
        node_timeout: Duration::from_secs(1),
        drift_factor: Timing::DEFAULT_DRIFT_FACTOR,
    };
    let clients: Vec<Redlock> = (0..procs)
        .map(|_| {
            let masters = cluster
                .urls()
                .iter()
                .map(|u| Master::parse(u).unwrap())
                .collect();
            Redlock::new(masters, None).expect("client")
        })
        .collect();
    // (acquired, released) instants of every hold.
    let holds = std::sync::Mutex::new(Vec::new());
    let barrier = Barrier::new(procs);
    std::thread::scope(|scope| {
        for client in &clients {
            let (holds, barrier, key) = (&holds, &barrier, &key);
            scope.spawn(move || {
                barrier.wait();
                for _ in 0..per_process {
                    let lock = client
                        .acquire(
                            &Request {
                                key,
                                kind: Kind::Lock,
                                timing,
                                holder: None,
                                wait: Duration::from_secs(60),
                                supersede: false,
                                history: History::default(),
                            },
                            &Cancel::default(),
                            &mut |_| {},
                        )
                        .expect("acquire");
                    let acquired = Instant::now();
                    let released = Instant::now();
                    client.release(&lock);
                    holds.lock().unwrap().push((acquired, released));
                }
            });
        }
    });
    let mut holds = holds.into_inner().unwrap();
    holds.sort();
    for pair in holds.windows(2) {
        assert!(
            pair[0].1 <= pair[1].0,
            "MUTUAL EXCLUSION VIOLATED between library holders"
        );
    }
    let mut gaps: Vec<Duration> = holds.windows(2).map(|p| p[1].0 - p[0].1).collect();
    gaps.sort_unstable();
    let us = |q: f64| percentile(&gaps, q).as_secs_f64() * 1e6;
    println!(
        "contention tool=library procs={procs} sections={} handoff_p50_us={:.0} handoff_p90_us={:.0} \
         handoff_p99_us={:.0} handoff_max_us={:.0}",
        holds.len(),
        us(0.5),
        us(0.9),
        us(0.99),
        us(1.0)
    );
}

fn report(run: &Run) {
    let gaps = handoff_gaps(&run.sections);
    let us = |q: f64| percentile(&gaps, q) as f64 / 1e3;
    let count = run.sections.len();
    println!(
        "contention tool={} procs={} sections={count} wall_ms={:.1} per_s={:.1} \
         handoff_p50_us={:.0} handoff_p90_us={:.0} handoff_p99_us={:.0} handoff_max_us={:.0}",
        run.tool,
        run.workers,
        run.wall.as_secs_f64() * 1e3,
        count as f64 / run.wall.as_secs_f64(),
        us(0.5),
        us(0.9),
        us(0.99),
        us(1.0)
    );
}
