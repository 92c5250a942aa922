//! Metrics for cron monitoring: what `run`, `acquire` and `release` saw, added to a file in
//! Prometheus's text format that node_exporter's textfile collector serves.
//!
//! Per lock key (label `key`): `redlock_wait_seconds` (histogram, seconds spent taking the lock,
//! whatever the outcome), `redlock_held_seconds` (histogram, seconds from taking the lock to
//! releasing or losing it), `redlock_outcomes_total{mode,outcome}` (counter, by mode: reader
//! for `--shared`, writer for the rest; and outcome: acquired, conflict, unavailable, lost,
//! max_duration, outdated: a higher `--order` had taken the lock, revoked (lost to
//! `release --force`), forced (a `release --force` that revoked it)),
//! `redlock_wakeups_total{cause}` (counter: locks taken after
//! waiting in the fair queue, by what started the turn that took them: joined, notice,
//! heartbeat, backoff; a heartbeat is a lost wake-up) and
//! `redlock_last_success_timestamp_seconds` (gauge).
//!
//! Many processes write one file; no count may be lost and the collector must never read half
//! a file. How:
//! 1. **Each process adds only its own observations** to what the file says at that moment: it
//!    never writes a total it computed earlier.
//! 2. **Read, add and write happen under an exclusive `flock` on a sidecar file**, `PATH.lock`
//!    (see `file::sidecar` for why not the file itself), so two writers never both add to the
//!    same old content.
//! 3. **The new content is written to a temporary file in the same directory, synced, and
//!    renamed over the file**: a rename is atomic, so the collector reads either the old file or
//!    the new one. A writer that dies before the rename leaves the file as it was (and a
//!    `.PATH.*.tmp` file the collector ignores: it reads only `*.prom`).
//! 4. **The wait for another writer's lock is bounded** ([`file::LOCK_WAIT`]): a writer stopped
//!    while holding it (SIGSTOP) costs this process its update, not its exit.
//!
//! A failure to write is never the command's failure: the caller gets an error to print as one
//! warning line, and its exit status stays what the lock work decided.
//!
//! No crate does this: Prometheus client crates keep metrics in memory for a scrape endpoint,
//! and what is needed here is a small reader for the file's own lines, the merge, and the lock.

mod file;
pub mod text;

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use file::sidecar;
use text::{KeyMetrics, Metrics};

/// How an attempt to take or hold a lock ended, as counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The lock was taken.
    Acquired,
    /// It was held elsewhere and the wait ran out.
    Conflict,
    /// Too few masters answered (or too slowly to leave any validity).
    Unavailable,
    /// It was lost while held (`run`), or found no longer held at release.
    Lost,
    /// `run --max-duration` stopped the command.
    MaxDuration,
    /// A higher `--order` had already taken the lock: the command did not run.
    Outdated,
    /// A newer waiter evicted it from the line (`--supersede`): the command did not run.
    Superseded,
    /// A superseding waiter lost its place in line, evicted by nobody known (`--supersede`):
    /// the command did not run.
    LostPlace,
    /// It was revoked while held, by `release --force` (counted in place of `Lost`).
    Revoked,
    /// This `release --force` revoked it.
    Forced,
    /// `run`'s command ended by itself and the lock was released: the turn `redlock history`
    /// shows as released (lost, revoked and max_duration are counted instead where one of
    /// those ended it). A turn that expired is not counted: its holder was killed, or frozen.
    Released,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Acquired => "acquired",
            Outcome::Conflict => "conflict",
            Outcome::Unavailable => "unavailable",
            Outcome::Lost => "lost",
            Outcome::MaxDuration => "max_duration",
            Outcome::Outdated => "outdated",
            Outcome::Superseded => "superseded",
            Outcome::LostPlace => "lost_place",
            Outcome::Revoked => "revoked",
            Outcome::Forced => "forced",
            Outcome::Released => "released",
        }
    }
}

/// What one command saw of one lock.
#[derive(Clone, Debug, PartialEq)]
pub struct Observations {
    pub key: String,
    pub wait: Option<Duration>,
    pub held: Option<Duration>,
    pub outcomes: Vec<Outcome>,
    /// The mode the outcomes are counted by: `reader` (`--shared`) or `writer` (see
    /// `text::MODES`).
    pub mode: &'static str,
    /// What started the turn in the fair queue that took the lock (one of
    /// `text::WAKEUP_CAUSES`), when it was taken after waiting in line.
    pub wakeup: Option<&'static str>,
    /// When the command succeeded under the lock, if it did.
    pub success_at: Option<SystemTime>,
}

impl Observations {
    /// Observations of `key` taken as a reader (`--shared`) or not.
    pub fn of(key: &str, reader: bool) -> Observations {
        Observations {
            mode: if reader { "reader" } else { "writer" },
            ..Observations::new(key)
        }
    }

    pub fn new(key: &str) -> Observations {
        Observations {
            key: key.to_string(),
            wait: None,
            held: None,
            outcomes: Vec::new(),
            mode: "writer",
            wakeup: None,
            success_at: None,
        }
    }

    fn is_empty(&self) -> bool {
        self.wait.is_none()
            && self.held.is_none()
            && self.outcomes.is_empty()
            && self.wakeup.is_none()
            && self.success_at.is_none()
    }

    /// Adds these observations to `metrics`.
    pub fn add_to(&self, metrics: &mut Metrics) {
        let entry: &mut KeyMetrics = metrics.keys.entry(text::label_key(&self.key)).or_default();
        if let Some(wait) = self.wait {
            entry.wait.observe(wait.as_secs_f64());
        }
        if let Some(held) = self.held {
            entry.held.observe(held.as_secs_f64());
        }
        for outcome in &self.outcomes {
            let mode_outcome = (self.mode.to_string(), outcome.label().to_string());
            *entry.outcomes.entry(mode_outcome).or_insert(0) += 1;
        }
        if let Some(cause) = self.wakeup {
            *entry.wakeups.entry(cause.to_string()).or_insert(0) += 1;
        }
        if let Some(at) = self.success_at {
            let seconds = at.duration_since(UNIX_EPOCH).map_or(0.0, |d| {
                // Milliseconds are plenty, and print short.
                (d.as_millis() as f64) / 1000.0
            });
            entry.last_success = Some(entry.last_success.map_or(seconds, |s| s.max(seconds)));
        }
    }
}

/// Adds `observations` to the file at `path` (see the module header). A file that is not one
/// redlock wrote is replaced, and said so in the error's place: as a warning.
pub fn record(path: &Path, observations: &Observations) -> Result<(), String> {
    if observations.is_empty() {
        return Ok(());
    }
    let mut replaced = None;
    file::update(path, |old| {
        let mut metrics = Metrics::parse(old).unwrap_or_else(|why| {
            replaced = Some(why);
            Metrics::default()
        });
        observations.add_to(&mut metrics);
        Ok(metrics.render())
    })?;
    match replaced {
        Some(why) => Err(format!(
            "its old content was not redlock's metrics ({why}) and was replaced: counts start \
             again from this run"
        )),
        None => Ok(()),
    }
}

/// The most one update of the metrics file may take: the wait for another writer's lock, then
/// the read, the write and the rename, which on a healthy disk take milliseconds.
pub const WRITE_LIMIT: std::time::Duration = file::LOCK_WAIT.saturating_add(Duration::from_secs(5));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_add_up() {
        let mut metrics = Metrics::default();
        let mut seen = Observations::new("job");
        seen.wait = Some(Duration::from_millis(20));
        seen.held = Some(Duration::from_secs(3));
        seen.outcomes = vec![Outcome::Acquired, Outcome::Lost];
        seen.wakeup = Some("notice");
        seen.success_at = Some(UNIX_EPOCH + Duration::from_millis(1_700_000_000_500));
        seen.add_to(&mut metrics);
        seen.success_at = Some(UNIX_EPOCH + Duration::from_secs(1_600_000_000));
        seen.add_to(&mut metrics);
        let job = &metrics.keys["job"];
        assert_eq!(job.wait.count, 2);
        assert_eq!(job.held.count, 2);
        let count = |mode: &str, outcome: &str| job.outcomes[&(mode.into(), outcome.into())];
        assert_eq!(count("writer", "acquired"), 2);
        assert_eq!(count("writer", "lost"), 2);
        assert_eq!(count("writer", "conflict"), 0);
        assert_eq!(count("reader", "acquired"), 0);
        assert_eq!(job.wakeups["notice"], 2);
        assert_eq!(job.wakeups["heartbeat"], 0);
        // The latest success stays.
        assert_eq!(job.last_success, Some(1_700_000_000.5));
    }

    #[test]
    fn a_foreign_file_is_replaced_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.prom");
        std::fs::write(&path, "node_load1 0.5\n").unwrap();
        let mut seen = Observations::new("k");
        seen.outcomes.push(Outcome::Conflict);
        let error = record(&path, &seen).unwrap_err();
        assert!(error.contains("line 1"), "{error}");
        record(&path, &seen).unwrap();
        let metrics = Metrics::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let conflicts = ("writer".to_string(), "conflict".to_string());
        assert_eq!(metrics.keys["k"].outcomes[&conflicts], 2);
    }

    #[test]
    fn nothing_seen_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.prom");
        record(&path, &Observations::new("k")).unwrap();
        assert!(!path.exists());
    }
}
