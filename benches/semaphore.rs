//! Semaphore throughput: 8 processes take turns on ONE key, 25 critical sections each, with
//! `redlock run --limit 2` over 5 local masters, beside `redlock run` (the lock) on the same
//! masters. (`consul lock -n 2`, the usual point of comparison, cannot be installed from the
//! package registries this project builds with: Debian has no `consul` package.)
//!
//! Each critical section is a bash command that logs its start and end (`$EPOCHREALTIME`, no
//! extra process) and, in the second round, does 20 ms of "work" (`read -t`, a builtin wait),
//! where up to two holders at once should finish in about half the lock's time. The bench
//! checks from the log that no more than L sections ever ran at once, and panics otherwise.
//!
//! Prints one line per run:
//! `semaphore tool=limit2 procs=8 work_ms=20 sections=200 wall_ms=… per_s=… most_at_once=2`.
//! Usage: `cargo bench --bench semaphore`. Without `--bench` (`cargo test --benches`) it only
//! checks, briefly, that the sections respect the limit.

#[path = "../tests/common/mod.rs"]
mod common;

use std::process::Command;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use common::Cluster;

/// The critical section: `$SECTION` tells sections apart, `$WORK` is the work in seconds.
const CRITICAL_SECTION: &str = r#"echo "start $SECTION ${EPOCHREALTIME/./}000" >> "$LOG"
[ "$WORK" = 0 ] || read -r -t "$WORK" _ <> <(:) || true
echo "end $SECTION ${EPOCHREALTIME/./}000" >> "$LOG""#;

const PROCS: usize = 8;

fn main() {
    let benchmarking = std::env::args().any(|arg| arg == "--bench");
    let per_process = if benchmarking { 25 } else { 2 };
    // Started on the main thread: the servers die with the thread that spawned them.
    let cluster = Cluster::start(5);
    let tmp = tempfile::tempdir().expect("temp dir");
    for work_ms in [0u64, 20] {
        for (tool, limit) in [("limit2", Some(2)), ("lock", None)] {
            let key = format!("bench-semaphore-{tool}-{work_ms}");
            let log = tmp.path().join(format!("{key}.log"));
            let command = || {
                let mut cmd = cluster.redlock();
                cmd.args(["run", "--key", &key, "--ttl", "10s", "--wait", "120s"]);
                if let Some(limit) = limit {
                    cmd.args(["--limit", &limit.to_string()]);
                }
                cmd.args(["--", "bash", "-c", CRITICAL_SECTION])
                    .env("LOG", &log)
                    .env("WORK", format!("{}", work_ms as f64 / 1000.0));
                cmd
            };
            let wall = run_contenders(per_process, command);
            let text = std::fs::read_to_string(&log).expect("read the section log");
            let most = most_at_once(&text);
            assert!(
                most <= limit.unwrap_or(1),
                "LIMIT VIOLATED: {most} sections at once with {tool}"
            );
            let sections = PROCS * per_process;
            println!(
                "semaphore tool={tool} procs={PROCS} work_ms={work_ms} sections={sections} \
                 wall_ms={:.1} per_s={:.1} most_at_once={most}",
                wall.as_secs_f64() * 1e3,
                sections as f64 / wall.as_secs_f64()
            );
        }
    }
}

/// Starts the contenders at once, each running `per_process` sections in turn; the wall time.
fn run_contenders(per_process: usize, command: impl Fn() -> Command + Sync) -> Duration {
    let barrier = Barrier::new(PROCS + 1);
    let start = std::thread::scope(|scope| {
        for worker in 0..PROCS {
            let (barrier, command) = (&barrier, &command);
            scope.spawn(move || {
                barrier.wait();
                for i in 0..per_process {
                    let status = command()
                        .env("SECTION", (worker * per_process + i).to_string())
                        .status()
                        .expect("spawn a contender");
                    assert!(status.success(), "a contender failed: {status}");
                }
            });
        }
        barrier.wait();
        Instant::now()
    });
    start.elapsed()
}

/// The most sections inside at once, from the log's start and end times.
fn most_at_once(log: &str) -> usize {
    let mut events: Vec<(u64, i32)> = log
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [kind, _, ns] = fields[..] else {
                panic!("malformed log line {line:?}");
            };
            let ns: u64 = ns.parse().expect("timestamp");
            // At equal times an end comes first: touching sections do not overlap.
            (ns, if kind == "start" { 1 } else { -1 })
        })
        .collect();
    events.sort_unstable();
    let mut inside = 0i32;
    let mut most = 0;
    for (_, step) in events {
        inside += step;
        most = most.max(inside);
    }
    most as usize
}
