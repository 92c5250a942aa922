//! What several subcommands share: opening the client, taking the lock with progress and a
//! clear failure, reporting a release.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::sync::mpsc::{Receiver, Sender};

use crate::config::{Context, LockSettings, env};
use crate::exit::{self, Failure};
use crate::lock::{
    AcquireError, AttemptFailure, Cancel, FenceError, Holder, Lock, MasterFailure, Redlock,
    Released, Verdict,
};
use crate::supervise::{self, Event, signals};
use crate::{info, log};

/// What to check when masters fail: the cause is in each master's error (refused, timed out,
/// wrong password, a TLS port spoken to in plain text).
pub const UNREACHABLE_ADVICE: &str =
    "check that they run and are reachable, and that the server URLs and credentials are right";

/// The prefix `acquire` puts on the token of a nested (re-entrant) acquisition: `release`
/// leaves such a lock to the outer holder.
pub const NESTED_PREFIX: &str = "nested:";

/// If this process inherited a lock on `key` (REDLOCK_KEY and REDLOCK_TOKEN, as `run` and
/// `acquire --format env` provide) that a majority still holds, its token: the caller is inside
/// the holder and must re-use the lock, not wait for itself. Either variable set to something
/// that is not text is an error: taken for unset, the caller would wait for itself.
pub fn inherited_lock(
    client: &Redlock,
    key: &str,
    node_timeout: Duration,
) -> Result<Option<String>, Failure> {
    let inherited_key = env::text(env::KEY_ENV)?;
    let token = env::text(env::TOKEN_ENV)?;
    let (Some(inherited_key), Some(token)) = (inherited_key, token) else {
        return Ok(None);
    };
    let token = token.strip_prefix(NESTED_PREFIX).unwrap_or(&token);
    if inherited_key != key || token.is_empty() {
        return Ok(None);
    }
    let states: Vec<_> = client
        .inspect(key, node_timeout)
        .into_iter()
        .map(|inspection| inspection.state)
        .collect();
    match crate::lock::judge(&states) {
        Verdict::Held { token: holder, .. } if holder == token => {
            info!("lock {key:?} is already held by an enclosing redlock: re-using it");
            Ok(Some(token.to_string()))
        }
        _ => {
            info!("inherited lock {key:?} is no longer held: taking it afresh");
            Ok(None)
        }
    }
}

/// What a command that may wait for a lock hears of signals: the supervisor's channel, with the
/// handlers installed on it, and the cancel that a terminating signal triggers.
pub struct Signals {
    pub events: Sender<Event>,
    pub inbox: Receiver<Event>,
    pub cancel: Cancel,
}

/// Installs the signal handlers. Done before taking the lock, so that a signal arriving
/// meanwhile ends the wait and releases whatever was taken.
pub fn listen_for_signals() -> Result<Signals, Failure> {
    let (events, inbox) = supervise::channel();
    let cancel = Cancel::default();
    signals::install(events.clone(), cancel.clone())
        .map_err(|e| Failure::os(format!("cannot install signal handlers: {e}")))?;
    Ok(Signals {
        events,
        inbox,
        cancel,
    })
}

/// The failure for a wait that a signal ended: exit 128+N for the terminating signal found in
/// `inbox` (SIGINT if none is there any more), and nothing printed.
fn interrupted(inbox: &Receiver<Event>, key: &str) -> Failure {
    let signal = inbox
        .try_iter()
        .find_map(|event| match event {
            Event::Signal(s) if signals::is_terminating(s) => Some(s),
            _ => None,
        })
        .unwrap_or(libc::SIGINT);
    info!(
        "{} while waiting for lock {key:?}: gave up",
        signals::name(signal)
    );
    Failure::new(exit::killed_by(signal), "")
}

/// Writes a report to stdout. A closed pipe (`redlock status | head -1`) is not an error: the
/// reader has what it wanted. Any other failure (a full disk) is: the report was lost.
pub fn print(text: &str) -> Result<(), Failure> {
    match write_stdout(text) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(cannot_write(&e)),
        _ => Ok(()),
    }
}

/// Writes what the caller cannot do without (a token): any failure, a closed pipe included,
/// is an error; and so is a standard output that was closed when redlock started, which
/// swallows every write (see [`crate::stdio`]).
pub fn print_all(text: &str) -> Result<(), Failure> {
    if crate::stdio::stdout_was_closed() {
        return Err(Failure::os(
            "cannot write to standard output: it was closed when redlock started",
        ));
    }
    write_stdout(text).map_err(|e| cannot_write(&e))
}

fn write_stdout(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush())
}

fn cannot_write(error: &std::io::Error) -> Failure {
    Failure::os(format!("cannot write to standard output: {error}"))
}

pub fn open_client(context: &Context) -> Result<Arc<Redlock>, Failure> {
    use anyhow::Context as _;
    Redlock::new(context.masters.clone(), context.tls.clone())
        .context("cannot start the client")
        .map(Arc::new)
        .map_err(|e| Failure::os(format!("{e:#}")))
}

/// Takes the lock as `settings` say. While waiting, says who is in the way (with -v, or when
/// stderr is a terminal). A wait that a signal ended fails with 128+N, quietly.
pub fn acquire(
    client: &Redlock,
    settings: &LockSettings,
    holder: &Holder,
    signals: &Signals,
    quiet: bool,
) -> Result<Lock, Failure> {
    let mut progress = WaitProgress::new(&settings.key, quiet);
    let result = client.acquire(
        &settings.key,
        settings.timing,
        Some(holder),
        settings.wait,
        &signals.cancel,
        &mut |failure| progress.update(failure),
    );
    progress.finish();
    result.map_err(|error| match error {
        AcquireError::Cancelled => interrupted(&signals.inbox, &settings.key),
        AcquireError::Failed(failure) => {
            describe_failure(&settings.key, &failure, settings, client.quorum(), quiet)
        }
    })
}

fn describe_failure(
    key: &str,
    failure: &AttemptFailure,
    settings: &LockSettings,
    quorum: usize,
    quiet: bool,
) -> Failure {
    match failure {
        AttemptFailure::Held { holder, expires_in } => {
            let who = match holder {
                Some(holder) => format!("is held by {}", holder.describe()),
                None => "is held by another client".to_string(),
            };
            let expiry = expires_in
                .map(|t| format!(", expires in {} unless renewed", whole_seconds(t)))
                .unwrap_or_default();
            let advice = if settings.wait.is_zero() {
                "; use --wait DURATION to wait for it".to_string()
            } else {
                format!(
                    "; gave up after waiting {}",
                    humantime::format_duration(settings.wait)
                )
            };
            let message = if quiet {
                String::new()
            } else {
                format!("lock {key:?} {who}{expiry}{advice}")
            };
            Failure::new(settings.conflict_exit_code, message)
        }
        AttemptFailure::Unreachable { needed, failures } => Failure::new(
            exit::UNAVAILABLE,
            format!(
                "cannot reach a majority of masters for lock {key:?} (need {needed}): {}; {UNREACHABLE_ADVICE}",
                list(failures)
            ),
        ),
        AttemptFailure::TooSlow { elapsed } => Failure::new(
            exit::UNAVAILABLE,
            format!(
                "a majority granted lock {key:?} but only after {elapsed:.0?}, leaving no validity \
                 of the {} TTL (need {quorum} masters); raise --ttl or check the network",
                humantime::format_duration(settings.timing.ttl)
            ),
        ),
    }
}

/// Obtains a fencing token for a lock just taken, if `--fence` asked for one; on failure the
/// lock is released and the failure explains why.
pub fn fence_if_asked(client: &Redlock, lock: &Lock, asked: bool) -> Result<Option<u64>, Failure> {
    if asked {
        fence(client, lock).map(Some)
    } else {
        Ok(None)
    }
}

fn fence(client: &Redlock, lock: &Lock) -> Result<u64, Failure> {
    let key = lock.key();
    client.fence(lock).map_err(|error| {
        let (code, message) = match error {
            FenceError::Unreachable { failures } => (
                exit::UNAVAILABLE,
                format!(
                    "took lock {key:?} but cannot reach a majority of masters for its fencing \
                     token: {}; the lock was released",
                    list(&failures)
                ),
            ),
            FenceError::Expired => (
                exit::LOCK_LOST,
                format!("lock {key:?} expired before its fencing token was granted; raise --ttl"),
            ),
            FenceError::Contended => (
                exit::UNAVAILABLE,
                format!(
                    "the fencing counter of lock {key:?} kept changing under us: is another \
                     client writing {}? The lock was released",
                    crate::lock::keys::fence(key)
                ),
            ),
            FenceError::Corrupt {
                master,
                key: counter,
            } => (
                exit::UNAVAILABLE,
                format!(
                    "{master} holds something that is not a number at {counter}; fix or delete \
                     that key. The lock was released"
                ),
            ),
        };
        report_release(client, lock);
        Failure::new(code, message)
    })
}

/// Says what a release found, when it is worth saying.
pub fn report_release(client: &Redlock, lock: &Lock) {
    match client.release(lock) {
        Released::Yes => info!("released {:?}", lock.key()),
        Released::NotHeld => info!(
            "lock {:?} was no longer held at release (it had expired or been taken over)",
            lock.key()
        ),
        Released::Unknown { failures } => log::line(format_args!(
            "could not confirm the release of lock {:?} on a majority ({}); it expires by itself \
             within {}",
            lock.key(),
            list(&failures),
            humantime::format_duration(lock.timing().ttl)
        )),
    }
}

/// `--hold-min`: instead of deleting the lock, lets it expire `remaining` from now, so that the
/// same job started elsewhere meanwhile still finds it taken.
pub fn hold_until(client: &Redlock, lock: &Lock, remaining: Duration) {
    let held = client.expire_in(lock, remaining);
    if held {
        info!(
            "keeping lock {:?} for {} more (--hold-min)",
            lock.key(),
            humantime::format_duration(Duration::from_millis(remaining.as_millis() as u64))
        );
    } else {
        // The lock is gone already, or its masters are unreachable: nothing left to keep.
        report_release(client, lock);
    }
}

pub fn list(failures: &[MasterFailure]) -> String {
    failures
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn whole_seconds(d: Duration) -> humantime::FormattedDuration {
    humantime::format_duration(Duration::from_secs(d.as_secs().max(1)))
}

/// The "waiting for lock" line: updated in place on a terminal, one line per change of holder
/// with -v otherwise, nothing with --quiet or when neither applies.
struct WaitProgress<'a> {
    key: &'a str,
    terminal: bool,
    enabled: bool,
    last: Option<String>,
    last_drawn: Option<Instant>,
    drawn: bool,
}

impl<'a> WaitProgress<'a> {
    fn new(key: &'a str, quiet: bool) -> WaitProgress<'a> {
        let terminal = std::io::stderr().is_terminal();
        WaitProgress {
            key,
            terminal,
            enabled: !quiet && (terminal || log::enabled(1)),
            last: None,
            last_drawn: None,
            drawn: false,
        }
    }

    fn update(&mut self, failure: &AttemptFailure) {
        if !self.enabled {
            return;
        }
        let why = match failure {
            AttemptFailure::Held {
                holder: Some(holder),
                ..
            } => format!("held by {}", holder.describe()),
            AttemptFailure::Held { holder: None, .. } => "held by another client".into(),
            AttemptFailure::Unreachable { failures, .. } => {
                format!("masters unreachable: {}", list(failures))
            }
            AttemptFailure::TooSlow { .. } => "masters too slow".into(),
        };
        let line = format!("waiting for lock {:?}: {why}", self.key);
        if self.terminal {
            // Redraw at most a few times a second; the holder's age changes every second.
            let due = self
                .last_drawn
                .is_none_or(|t| t.elapsed() >= Duration::from_millis(250));
            if due || self.last.as_deref() != Some(line.as_str()) {
                eprint!("\r\x1b[2Kredlock: {line}");
                self.drawn = true;
                self.last_drawn = Some(Instant::now());
            }
        } else if self.last.as_deref().map(strip_age) != Some(strip_age(&line)) {
            log::line(format_args!("{line}"));
        }
        self.last = Some(line);
    }

    fn finish(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[2K");
        }
    }
}

/// The line without the trailing "for 2m10s", so that a non-terminal log gets a new line
/// only when the holder changes, not every second.
fn strip_age(line: &str) -> &str {
    match line.rfind(") for ") {
        Some(i) => &line[..i],
        None => line,
    }
}
