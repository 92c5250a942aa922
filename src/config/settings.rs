//! Each command's settings, from its flags and the defaults: the lock (key, timing, wait), what
//! `run` supervises with, and the key and token of `release` and `extend`. Values are checked
//! for meaning here (a TTL that leaves no validity, a node timeout as long as the TTL).

use super::file::Places;
use super::*;
use crate::cli::SdNotify;
use crate::notify;

/// How a lock is named and taken.
#[derive(Clone, Debug, PartialEq)]
pub struct LockSettings {
    pub key: String,
    pub timing: Timing,
    /// How long to keep retrying; zero means one attempt.
    pub wait: Duration,
    /// The exit code for "held by someone else".
    pub conflict_exit_code: i32,
    /// Obtain a fencing token after taking the lock.
    pub fence: bool,
    /// `--order`: this run's order (see `lock::OrderError::Outdated`).
    pub order: Option<u64>,
    /// The exit code for "a higher order already took the lock".
    pub outdated_exit_code: i32,
    /// `--supersede`: waiting, evict the older waiters of the line (see `lock::Request`).
    pub supersede: bool,
    /// The exit code for "a newer waiter superseded this one".
    pub superseded_exit_code: i32,
    /// `--limit`: take one of this many slots (a semaphore) instead of the lock.
    pub limit: Option<u32>,
    /// `--shared`: take the lock as a reader, shared with other readers.
    pub shared: bool,
    /// The note the holder record carries (see `note`).
    pub note: Option<note::Note>,
    /// `--history`: whether the turn is recorded, and how many events the key keeps.
    pub history: crate::lock::History,
}

impl LockSettings {
    /// What these settings take: the lock, a reader's share (`--shared`), or a slot.
    pub fn kind(&self) -> crate::lock::Kind {
        use crate::lock::Kind;
        match (self.limit, self.shared) {
            (Some(limit), _) => Kind::Slot { limit },
            (None, true) => Kind::Reader,
            (None, false) => Kind::Lock,
        }
    }
}

/// Everything `redlock run` needs.
#[derive(Clone, Debug)]
pub struct RunSettings {
    pub lock: LockSettings,
    pub supervise: supervise::Options,
    pub hold_min: Option<Duration>,
    /// Who speaks to systemd once the command runs (`--sd-notify`).
    pub speaker: notify::Speaker,
    pub command: Vec<OsString>,
}

pub fn lock_settings(args: &LockArgs, defaults: &Defaults) -> Result<LockSettings, Failure> {
    validate_key(&args.key)?;
    let ttl = args.ttl.unwrap_or(defaults.ttl.value);
    validate_ttl(ttl, None)?;
    let timing = lock_timing(ttl, args.node_timeout, args.drift_factor, defaults)?;
    let wait = if args.no_wait {
        Duration::ZERO
    } else {
        args.wait.unwrap_or(Duration::ZERO)
    };
    if let Some(limit) = args.limit
        && limit > 1
        && args.fence
    {
        return Err(Failure::usage(format!(
            "--fence with --limit {limit}: up to {limit} holders run at once, so a resource \
             cannot refuse the older tokens; drop --fence, or use a lock (no --limit)"
        )));
    }
    if args.shared && args.fence {
        return Err(Failure::usage(shared_fence(&args.key)));
    }
    check_order(args)?;
    check_supersede(args, wait)?;
    Ok(LockSettings {
        key: args.key.clone(),
        timing,
        wait,
        conflict_exit_code: args.conflict_exit_code.map_or(exit::CONFLICT, i32::from),
        fence: args.fence,
        order: args.order,
        outdated_exit_code: args.outdated_exit_code.map_or(exit::OUTDATED, i32::from),
        supersede: args.supersede,
        superseded_exit_code: args
            .superseded_exit_code
            .map_or(exit::SUPERSEDED, i32::from),
        limit: args.limit,
        shared: args.shared,
        note: note::resolve(args.note.as_deref(), note::from_env)?,
        history: match args.history {
            None => crate::lock::History::default(),
            Some(0) => crate::lock::History::OFF,
            Some(cap) => crate::lock::History { cap: Some(cap) },
        },
    })
}

/// `--order` needs a lock held alone, and a number Lua compares exactly.
fn check_order(args: &LockArgs) -> Result<(), Failure> {
    let Some(order) = args.order else {
        return Ok(());
    };
    if order > crate::lock::MAX_ORDER {
        return Err(Failure::usage(format!(
            "--order {order} is too large: orders go up to {} (2^53-1); pass the pipeline's \
             number or id as it is",
            crate::lock::MAX_ORDER
        )));
    }
    // A slot of one is still a slot (its own keys, no order register): refused here, before
    // anything is taken or waited for, rather than after the slot is taken.
    if args.limit == Some(1) {
        return Err(Failure::usage(format!(
            "--order with --limit 1 on {:?}: only the lock keeps orders, not a semaphore's \
             slot; drop --limit 1 (the lock lets one in too), or drop --order",
            args.key
        )));
    }
    let alongside = match (args.limit, args.shared) {
        (Some(limit), _) => format!("--limit {limit}"),
        (_, true) => "--shared".to_string(),
        _ => return Ok(()),
    };
    Err(Failure::usage(format!(
        "--order with {alongside} on {:?}: an order says which single run is newest, and \
         {alongside} lets several hold the key at once; drop --order, or take the lock alone",
        args.key
    )))
}

/// `--supersede` needs a wait (a run that does not wait never joins the line, so it would
/// supersede nobody and could not be superseded), and the lock held alone.
fn check_supersede(args: &LockArgs, wait: Duration) -> Result<(), Failure> {
    if !args.supersede {
        return Ok(());
    }
    let alongside = match (args.limit, args.shared) {
        (Some(limit), _) => Some(format!("--limit {limit}")),
        (_, true) => Some("--shared".to_string()),
        _ => None,
    };
    if let Some(alongside) = alongside {
        return Err(Failure::usage(format!(
            "--supersede with {alongside} on {:?}: only a lock's waiters supersede each other; \
             drop --supersede, or take the lock alone",
            args.key
        )));
    }
    if wait.is_zero() {
        return Err(Failure::usage(format!(
            "--supersede without --wait on {:?}: a run that does not wait never joins the line, \
             so it would supersede nobody; add --wait DURATION (or --wait forever)",
            args.key
        )));
    }
    Ok(())
}

/// `--fence` asked of a reader: refused, since readers hold the lock together.
pub fn shared_fence(key: &str) -> String {
    format!(
        "--fence with --shared on {key:?}: a fencing token needs the lock alone, and readers \
         share it; drop --fence (readers do not write), or take the lock without --shared"
    )
}

/// The timing of a lock that lives `ttl`: node timeout and drift factor from the flags, else
/// the config file, else (the node timeout) derived from the TTL; checked to leave the lock
/// some validity.
fn lock_timing(
    ttl: Duration,
    node_timeout_flag: Option<Duration>,
    drift_factor_flag: Option<f64>,
    defaults: &Defaults,
) -> Result<Timing, Failure> {
    let drift_factor = drift_factor_flag.unwrap_or(defaults.drift_factor.value);
    validate_drift_factor(drift_factor, None)?;
    let node_timeout_from_file = node_timeout_flag.is_none() && defaults.node_timeout.is_some();
    let node_timeout = node_timeout_flag
        .or(defaults.node_timeout.as_ref().map(|d| d.value))
        .unwrap_or_else(|| Timing::default_node_timeout(ttl));
    let file = defaults.file.as_ref().filter(|_| node_timeout_from_file);
    validate_node_timeout(node_timeout, ttl, file)?;
    let timing = Timing {
        ttl,
        node_timeout,
        drift_factor,
    };
    if timing.drift() + node_timeout >= ttl {
        return Err(Failure::usage(format!(
            "--ttl {} leaves no validity after the clock-drift allowance and one node timeout: \
             raise --ttl",
            show(ttl)
        )));
    }
    Ok(timing)
}

/// Checks a lock name given with `--key` (exit 64 when it cannot name a lock).
pub fn validate_key(key: &str) -> Result<(), Failure> {
    use crate::lock::keys::{KeyError, check_lock_key};
    match check_lock_key(key) {
        Ok(()) => Ok(()),
        Err(KeyError::Empty) => Err(Failure::usage(
            "--key must not be empty: name the lock, e.g. --key deploy-prod",
        )),
        Err(error @ KeyError::Reserved(_)) => Err(Failure::usage(format!(
            "--key {key:?}: {error} (holder records, fencing counters); choose another name"
        ))),
    }
}

pub(super) fn validate_ttl(ttl: Duration, from_file: Option<&Places>) -> Result<(), Failure> {
    // The upper bound (a year) is every duration's, checked when it is parsed.
    if ttl < Duration::from_millis(100) {
        return Err(rejected(
            from_file,
            "--ttl",
            "ttl",
            &show(ttl).to_string(),
            "is too short: use at least 100ms (30s suits most jobs; renewal keeps the lock \
             while the command runs)",
        ));
    }
    Ok(())
}

pub(super) fn validate_drift_factor(
    factor: f64,
    from_file: Option<&Places>,
) -> Result<(), Failure> {
    if !(0.0..0.5).contains(&factor) {
        return Err(rejected(
            from_file,
            "--drift-factor",
            "drift_factor",
            &factor.to_string(),
            "is out of range: use a value from 0 to 0.5 (default 0.01)",
        ));
    }
    Ok(())
}

fn validate_node_timeout(
    node_timeout: Duration,
    ttl: Duration,
    from_file: Option<&Places>,
) -> Result<(), Failure> {
    if node_timeout.is_zero() || node_timeout * 2 >= ttl {
        return Err(rejected(
            from_file,
            "--node-timeout",
            "node_timeout",
            &show(node_timeout).to_string(),
            &format!(
                "must be above zero and under half of the TTL {}: a slow master would eat the \
                 whole validity; raise the TTL or lower the node timeout",
                show(ttl)
            ),
        ));
    }
    Ok(())
}

pub fn run_settings(args: RunArgs, defaults: &Defaults) -> Result<RunSettings, Failure> {
    let lock = lock_settings(&args.lock, defaults)?;
    let ttl = lock.timing.ttl;
    let kill_after_from_file = args.kill_after.is_none() && defaults.kill_after.is_some();
    let kill_after = args
        .kill_after
        .or(defaults.kill_after.as_ref().map(|d| d.value))
        .unwrap_or_else(|| supervise::Options::default_kill_after(ttl));
    let longest = supervise::Options::max_kill_after(ttl);
    if kill_after > longest {
        return Err(rejected(
            defaults.file.as_ref().filter(|_| kill_after_from_file),
            "--kill-after",
            "kill_after",
            &show(kill_after).to_string(),
            &format!(
                "does not fit inside the TTL {}: the command must be dead before the lock's \
                 validity ends; use at most {} or raise the TTL",
                show(ttl),
                show(longest)
            ),
        ));
    }
    if let Some(max) = args.max_duration
        && max.is_zero()
    {
        return Err(Failure::usage(
            "--max-duration must be above zero, e.g. --max-duration 10m",
        ));
    }
    if args.command.first().is_none_or(|c| c.is_empty()) {
        return Err(Failure::usage(
            "no command to run: put it after --, e.g. redlock run --key k -- ./job.sh",
        ));
    }
    Ok(RunSettings {
        supervise: supervise::Options::new(ttl, kill_after).with_max_duration(args.max_duration),
        lock,
        hold_min: args.hold_min.filter(|d| !d.is_zero()),
        speaker: match args.notify.sd_notify {
            SdNotify::Redlock => notify::Speaker::Redlock,
            SdNotify::Command => notify::Speaker::Command,
        },
        command: args.command,
    })
}

/// Everything `redlock acquire` needs.
#[derive(Clone, Debug)]
pub struct AcquireSettings {
    pub lock: LockSettings,
    pub format: Format,
    pub renew_while: Option<i32>,
}

pub fn acquire_settings(
    args: AcquireArgs,
    defaults: &Defaults,
) -> Result<AcquireSettings, Failure> {
    let lock = lock_settings(&args.lock, defaults)?;
    if let Some(pid) = args.renew_while
        && !supervise::watch::process_exists(pid)
    {
        return Err(Failure::usage(format!(
            "--renew-while {pid}: no such process; pass the pid of a running process, e.g. $$ \
             for the calling shell"
        )));
    }
    Ok(AcquireSettings {
        lock,
        format: args.format,
        renew_while: args.renew_while,
    })
}

/// A lock named by key and token (`release`, `extend`), with the timing to use on it.
#[derive(Clone, Debug)]
pub struct TokenSettings {
    pub key: String,
    pub token: String,
    pub timing: Timing,
}

/// Settings for `release`. A release does not depend on the lock's TTL, so none is checked.
pub fn release_settings(args: &TokenArgs, defaults: &Defaults) -> Result<TokenSettings, Failure> {
    let token = checked_token(args)?;
    Ok(TokenSettings {
        key: args.key.clone(),
        token,
        timing: Timing {
            ttl: defaults.ttl.value,
            node_timeout: node_timeout(args.node_timeout, defaults)?,
            drift_factor: defaults.drift_factor.value,
        },
    })
}

/// What `release --force` needs: the key, the reason (checked as a note is), and the timing:
/// the node timeout, the drift factor of the TTL it keeps, and the default TTL, which it keeps
/// a key set without one closed for (see `lock::Forced`).
pub struct ForceSettings {
    pub key: String,
    pub reason: Option<String>,
    pub timing: Timing,
}

/// Settings for `release --force`.
pub fn force_settings(
    args: &TokenArgs,
    force: &ForceArgs,
    defaults: &Defaults,
) -> Result<ForceSettings, Failure> {
    validate_key(&args.key)?;
    // A token from the environment (a shell that ran `eval "$(redlock acquire --format env)"`)
    // is ignored; one given on the command line is a mistake worth a word.
    if let Some(token) = &args.token
        && env::text(env::TOKEN_ENV)?.as_ref() != Some(token)
    {
        return Err(Failure::usage(
            "--force revokes whoever holds the lock, without a token: drop --token (or, to \
             release your own lock, drop --force)",
        ));
    }
    let reason = force.reason.as_deref().filter(|reason| !reason.is_empty());
    if let Some(reason) = reason
        && reason.len() > crate::lock::MAX_NOTE
    {
        return Err(Failure::usage(format!(
            "--reason is {} bytes long: a reason holds at most {} bytes (a ticket's URL and a \
             few words); shorten it",
            reason.len(),
            crate::lock::MAX_NOTE
        )));
    }
    Ok(ForceSettings {
        key: args.key.clone(),
        reason: reason.map(str::to_string),
        timing: Timing {
            ttl: defaults.ttl.value,
            node_timeout: node_timeout(args.node_timeout, defaults)?,
            drift_factor: defaults.drift_factor.value,
        },
    })
}

/// Settings for `extend`: the new TTL (else the default TTL), timed as `acquire` would time a
/// lock of that TTL.
pub fn extend_settings(args: &ExtendArgs, defaults: &Defaults) -> Result<TokenSettings, Failure> {
    let token = checked_token(&args.lock)?;
    let ttl = args.ttl.unwrap_or(defaults.ttl.value);
    validate_ttl(ttl, None)?;
    Ok(TokenSettings {
        key: args.lock.key.clone(),
        token,
        timing: lock_timing(ttl, args.lock.node_timeout, None, defaults)?,
    })
}

/// The key and token of `release` and `extend`, checked; the token without stray whitespace.
fn checked_token(args: &TokenArgs) -> Result<String, Failure> {
    validate_key(&args.key)?;
    let Some(token) = args.token.as_deref().map(str::trim) else {
        return Err(Failure::usage(
            "--token is required (or REDLOCK_TOKEN): pass the token `redlock acquire` printed; \
             to revoke a lock without its token, use `redlock release --force`",
        ));
    };
    let marker = crate::lock::Marker::of(token);
    if marker == Some(crate::lock::Marker::Revoked) {
        return Err(Failure::usage(format!(
            "--token {token}: that is the value lock {:?} holds while revoked by `release \
             --force`, nobody's token; a revoked holder releases with its own token",
            args.key
        )));
    }
    if marker == Some(crate::lock::Marker::Readers) {
        return Err(Failure::usage(format!(
            "--token {token}: that is the value lock {:?} holds while readers (--shared) hold \
             it, nobody's token; a reader releases or extends with its own token (shr-...)",
            args.key
        )));
    }
    if token.is_empty() {
        return Err(Failure::usage(
            "--token must not be empty: pass the token `redlock acquire` printed",
        ));
    }
    Ok(token.to_string())
}

/// The per-node timeout of a command without a TTL of its own (`status`, `doctor`, `release`).
pub fn node_timeout(flag: Option<Duration>, defaults: &Defaults) -> Result<Duration, Failure> {
    let node_timeout = flag
        .or(defaults.node_timeout.as_ref().map(|d| d.value))
        .unwrap_or(DEFAULT_NODE_TIMEOUT);
    if node_timeout.is_zero() {
        return Err(Failure::usage("--node-timeout must be above zero, e.g. 1s"));
    }
    Ok(node_timeout)
}

/// Where to add metrics: `--metrics-file`, else the config file's `metrics_file`, else nowhere.
pub fn metrics_file(
    args: &crate::cli::MetricsArgs,
    defaults: &Defaults,
) -> Result<Option<std::path::PathBuf>, Failure> {
    match &args.metrics_file {
        Some(path) if path.as_os_str().is_empty() => Err(Failure::usage(
            "--metrics-file must not be empty: name a file, e.g. \
             --metrics-file /var/lib/node_exporter/textfile/redlock.prom",
        )),
        Some(path) => Ok(Some(path.clone())),
        None => Ok(defaults.metrics_file.as_ref().map(|m| m.value.clone())),
    }
}

pub fn show(d: Duration) -> humantime::FormattedDuration {
    humantime::format_duration(d)
}
