//! The critical section that the contention benches (`contention.rs`, `queue.rs`) run under
//! each lock, the workers that take turns running it ([`run_workers`]), and what the benches
//! read back from its log.
//!
//! Every section is a tiny bash command that appends its start and end time to a shared log
//! (bash's builtin `$EPOCHREALTIME`, CLOCK_REALTIME in microseconds: no extra process, which
//! would add a millisecond to every measurement). [`parse_sections`] pairs each start with its
//! end and panics if two sections overlapped: a benchmark of a lock that failed to exclude
//! must not print figures.

#![allow(dead_code)] // each bench uses a different part of this module

use std::path::Path;
use std::process::Command;
use std::sync::Barrier;
use std::time::{Duration, Instant, SystemTime};

/// The critical section. `$SECTION` tells the sections apart, so that the overlap check can
/// pair each start with its own end; times are logged in nanoseconds since the epoch.
pub const CRITICAL_SECTION: &str = r#"echo "start $SECTION ${EPOCHREALTIME/./}000" >> "$LOG"
echo "end $SECTION ${EPOCHREALTIME/./}000" >> "$LOG""#;

/// What one run of contending workers produced.
pub struct Run<'a> {
    pub tool: &'a str,
    pub workers: usize,
    pub per_worker: usize,
    /// From the moment the workers were let go until the last one finished.
    pub wall: Duration,
    /// (start, end) of every section, in nanoseconds since the epoch, by section id
    /// (`worker * per_worker + i` for the worker's `i`th section).
    pub sections: Vec<(u64, u64)>,
    /// When the worker spawned each section's locked command (CLOCK_REALTIME, nanoseconds
    /// since the epoch, like the log), by section id.
    pub spawned: Vec<u64>,
}

/// Starts `workers` threads at once, each standing in for a looping shell script: it runs
/// `per_worker` locked commands one after the other, each made by `command` and running
/// [`CRITICAL_SECTION`], and panics if one fails. Then reads back the log.
pub fn run_workers<'a>(
    dir: &Path,
    tool: &'a str,
    workers: usize,
    per_worker: usize,
    command: impl Fn() -> Command + Sync,
) -> Run<'a> {
    let log = dir.join(format!("{tool}-{workers}.log"));
    let barrier = Barrier::new(workers + 1);
    let (start, spawned) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                let (barrier, command, log) = (&barrier, &command, &log);
                scope.spawn(move || {
                    barrier.wait();
                    let mut spawned = Vec::with_capacity(per_worker);
                    for i in 0..per_worker {
                        let mut locked = command();
                        locked
                            .env("LOG", log)
                            .env("SECTION", (worker * per_worker + i).to_string());
                        spawned.push(realtime_ns());
                        let status = locked.status().expect("spawn a contender");
                        assert!(status.success(), "{tool}: a contender failed: {status}");
                    }
                    spawned
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let spawned: Vec<u64> = handles
            .into_iter()
            .flat_map(|handle| {
                // A worker's panic (a failed contender) is the run's.
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect();
        (start, spawned)
    });
    let wall = start.elapsed();
    let text = std::fs::read_to_string(&log).expect("read the section log");
    Run {
        tool,
        workers,
        per_worker,
        wall,
        sections: parse_sections(&text, workers * per_worker),
        spawned,
    }
}

/// CLOCK_REALTIME in nanoseconds since the epoch: the clock of bash's `$EPOCHREALTIME`.
fn realtime_ns() -> u64 {
    let since_epoch = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("the clock is after 1970");
    since_epoch.as_nanos() as u64
}

/// (start, end) of sections `0..expected`, in nanoseconds since the epoch, indexed by section
/// id. Panics on a malformed log, on a section that did not log both its start and its end,
/// and when two sections overlapped.
pub fn parse_sections(log: &str, expected: usize) -> Vec<(u64, u64)> {
    let mut sections = vec![(None, None); expected];
    for line in log.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [kind, id, ns] = fields[..] else {
            panic!("malformed log line {line:?}");
        };
        let id: usize = id.parse().expect("section id");
        let ns: u64 = ns.parse().expect("timestamp");
        let slot = match kind {
            "start" => &mut sections[id].0,
            "end" => &mut sections[id].1,
            _ => panic!("malformed log line {line:?}"),
        };
        let first = slot.replace(ns).is_none();
        assert!(first, "section {id} logged {kind} twice");
    }
    let sections: Vec<(u64, u64)> = sections
        .into_iter()
        .enumerate()
        .map(|(id, pair)| match pair {
            (Some(start), Some(end)) => (start, end),
            _ => panic!("section {id} did not log both its start and its end"),
        })
        .collect();
    let mut ordered = sections.clone();
    ordered.sort_unstable();
    for pair in ordered.windows(2) {
        let ((start_a, end_a), (start_b, end_b)) = (pair[0], pair[1]);
        assert!(
            end_a <= start_b,
            "MUTUAL EXCLUSION VIOLATED: section [{start_a}, {end_a}] overlaps [{start_b}, {end_b}]"
        );
    }
    sections
}

/// The hand-off gaps, sorted: from each section's end to the next section's start (the shell
/// exiting, the lock's release, the next waiter noticing and taking it, the next shell
/// starting), in nanoseconds.
pub fn handoff_gaps(sections: &[(u64, u64)]) -> Vec<u64> {
    let mut ordered = sections.to_vec();
    ordered.sort_unstable();
    let mut gaps: Vec<u64> = ordered
        .windows(2)
        .map(|pair| pair[1].0 - pair[0].1)
        .collect();
    gaps.sort_unstable();
    gaps
}

/// The nearest-rank percentile `q` (0 < q <= 1) of `sorted`, which must not be empty.
pub fn percentile<T: Copy>(sorted: &[T], q: f64) -> T {
    let rank = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
