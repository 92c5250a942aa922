//! `redlock list`: every lock on the masters that redlock's own keys name, with its holder and
//! queue, and every semaphore (`--limit`) with its slots; with `--problems`, the leak scan.
//! Glue: the scan is `Redlock::scan`, what each key holds `lock::KeyState` (judged once, as
//! `status` judges it); `view` and `problems` are pure functions of each key read, `render`
//! prints.
//!
//! The report streams: the scan keeps the locks' names only (sorted: the report is in key
//! order), and the locks are read, judged and printed [`READ_BATCH`] at a time, so memory does
//! not grow with the number of locks beyond their names (see `Redlock::scan`).
//!
//! Exit status: 0; with `--problems`, 1 when anything was found. 69 (78 for a configuration
//! cause) when a majority of the masters could not be scanned fully, and with `--problems`
//! when any master could not be and nothing was found: "nothing found" must not be claimed
//! for a master that was not looked at. The report is printed in every case.

pub(super) mod problems;
mod render;
mod view;

use std::time::Duration;

use crate::cli::{GlobalArgs, ListArgs};
use crate::config;
use crate::exit::{self, Failure};
use crate::lock::{MasterFailure, MasterScan, ScanEnd, ScanOptions};

use super::{open_client, output, wording};

/// The whole scan's budget without `--timeout`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a fencing counter may go unused before `--problems` reports it, without `--idle`:
/// longer than the gap between two runs of a monthly job.
const DEFAULT_IDLE: Duration = Duration::from_secs(90 * 24 * 3600);
/// Waiters read per lock and master.
pub(super) const MAX_WAITERS: usize = 100;
/// Locks read (and printed) at a time: memory holds one batch of reads, and a batch is
/// pipelined to every master at once.
const READ_BATCH: usize = 256;

pub fn list(global: &GlobalArgs, args: ListArgs) -> Result<i32, Failure> {
    if args.pattern.as_deref() == Some("") {
        return Err(Failure::usage(
            "--pattern must not be empty: give a glob, e.g. --pattern 'deploy-*', or leave it \
             out to list every lock",
        ));
    }
    let timeout = args.timeout.unwrap_or(DEFAULT_TIMEOUT);
    if timeout.is_zero() {
        return Err(Failure::usage("--timeout must be above zero, e.g. 10s"));
    }
    let context = config::context(global)?;
    let node_timeout = config::node_timeout(args.node_timeout, &context.defaults)?;
    context.warn();
    let client = open_client(&context)?;
    let scan = client.scan(&ScanOptions {
        pattern: args.pattern.clone(),
        timeout,
        node_timeout,
        max_waiters: MAX_WAITERS,
    });
    let mut findings = args
        .problems
        .then(|| problems::Findings::new(args.idle.unwrap_or(DEFAULT_IDLE)));
    let mut report = render::Report::new(args.json, &scan.masters, args.pattern.as_deref());
    output::print(&report.start())?;
    for keys in scan.locks.chunks(READ_BATCH) {
        let mut text = String::new();
        for lock in client.read_locks(&scan, keys) {
            if let Some(findings) = findings.as_mut() {
                findings.lock(&lock);
            }
            // A semaphore (`--limit`) is told as `status` tells one; anything else as a lock.
            if let Some(state) = view::listed(&lock, &scan.masters) {
                report.key(&mut text, &lock.key, &state);
            }
        }
        output::print(&text)?;
    }
    if let Some(findings) = findings.as_mut() {
        for strays in scan.strays.chunks(READ_BATCH) {
            for stray in client.read_strays(&scan, strays) {
                findings.stray(&stray);
            }
        }
    }
    for oversized in &scan.oversized {
        match findings.as_mut() {
            Some(findings) => findings.oversized(oversized),
            None => log::warn!(
                "warning: master {}: {} (it starts {}; list --problems says what to do)",
                scan.masters[oversized.master].master,
                problems::oversized_detail(oversized),
                crate::escape::quoted(&format!("{}…", problems::oversized_start(oversized))),
            ),
        }
    }
    output::print(&report.end(findings.as_ref()))?;

    let incomplete: Vec<&MasterScan> = scan.masters.iter().filter(|m| !m.complete()).collect();
    for master in &incomplete {
        log::warn!(
            "warning: master {} was not scanned fully ({}): locks and problems there may be \
             missing",
            master.master,
            why_incomplete(master, timeout)
        );
    }
    if findings.is_some_and(|f| f.count > 0) {
        return Ok(exit::LIST_FOUND_PROBLEMS);
    }
    let needed = if args.problems { 1 } else { client.quorum() };
    if incomplete.len() >= needed {
        return Err(not_scanned(&incomplete, args.problems));
    }
    Ok(exit::OK)
}

fn why_incomplete(master: &MasterScan, timeout: Duration) -> String {
    match &master.end {
        ScanEnd::Complete => "complete".into(),
        ScanEnd::OutOfTime => format!(
            "--timeout {} ran out after {}; give it more time",
            config::show(timeout),
            crate::plural::counted(master.keys, "key")
        ),
        ScanEnd::TooManyKeys => format!(
            "more than {} keys under redlock's prefix; narrow it with --pattern",
            crate::lock::MAX_SCAN_KEYS
        ),
        ScanEnd::Failed(error) => error.to_string(),
    }
}

/// The failure for masters that could not be scanned: their own causes where they failed (69,
/// or 78 for a configuration cause), else 69.
fn not_scanned(incomplete: &[&MasterScan], problems: bool) -> Failure {
    let what = if problems {
        format!(
            "cannot tell that nothing leaks: {} of the masters could not be scanned fully",
            incomplete.len()
        )
    } else {
        "cannot list the locks: a majority of the masters could not be scanned fully".to_string()
    };
    let failures: Vec<MasterFailure> = incomplete
        .iter()
        .filter_map(|m| match &m.end {
            ScanEnd::Failed(error) => Some(MasterFailure {
                master: m.master.to_string(),
                error: error.clone(),
            }),
            _ => None,
        })
        .collect();
    if failures.len() == incomplete.len() {
        return wording::masters_failed(&what, &failures);
    }
    Failure::new(
        exit::UNAVAILABLE,
        format!("{what} (see the warnings above)"),
    )
}
