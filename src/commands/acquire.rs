//! `redlock acquire`: take the lock, print its token, optionally leave a renewer behind.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::cli::{AcquireArgs, Format, GlobalArgs, RENEW_WHILE};
use crate::config::{self, Context};
use crate::exit::{self, Failure};
use crate::lock::{Holder, Lock, Master, Taken};
use crate::metrics::Observations;
use crate::notify::Notifier;
use crate::supervise::watch;

use super::bounded::{Ended, bounded};
use super::reentrance::NESTED_PREFIX;
use super::{acquiring, bounded, open_client, ordering, output, reentrance, releasing};

pub fn acquire(global: &GlobalArgs, args: AcquireArgs) -> Result<i32, Failure> {
    let context = config::context(global)?;
    let metrics_file = config::metrics_file(&args.metrics, &context.defaults)?;
    let settings = config::acquire_settings(args, &context.defaults)?;
    context.warn();
    // Printed nowhere, the token would leave a lock that nobody can release: refuse before
    // taking it. (Other failures to print are found on writing, and release the lock.)
    if crate::stdio::stdout_was_closed() {
        return Err(Failure::os(
            "standard output is closed, so the token could not be handed over: no lock was \
             taken; give acquire an output to print to (a file, a pipe, or $(...))",
        ));
    }
    let signals = acquiring::listen_for_signals()?;
    let client = open_client(&context)?;
    let key = &settings.lock.key;

    if let Some(token) = reentrance::inherited_lock(
        &client,
        key,
        settings.lock.kind(),
        settings.lock.timing.node_timeout,
    )? {
        // Under the enclosing hold, an order is raised there (see `run`).
        ordering::raise_under_enclosing_hold(&client, &settings.lock, global.quiet)?;
        let nested = format!("{NESTED_PREFIX}{token}");
        let fence = inherited_fence()?;
        output::print_all(&render(settings.format, key, &nested, None, None, fence))?;
        return Ok(exit::OK);
    }

    // The holder is the script that asked for the lock, not this short-lived process.
    // SAFETY: getppid cannot fail.
    let parent = unsafe { libc::getppid() };
    let holder_pid = settings.renew_while.unwrap_or(parent);
    let holder = Holder::of_process(holder_pid.unsigned_abs())
        .with_note(acquiring::note(&settings.lock))
        .with_order(settings.lock.order);
    let mut seen = Observations::of(key, settings.lock.shared);
    let taken = acquiring::take_in_turn(
        &client,
        &settings.lock,
        &holder,
        &signals,
        global.quiet,
        (&mut seen, &Notifier::none()),
    );
    // The lock is taken (or not) already: the metrics wait until the token is handed over.
    let record = || {
        bounded::record_metrics(Some(&signals), metrics_file.as_deref(), &seen);
    };
    let (Taken { lock, fence, .. }, late) = taken.inspect_err(|_| record())?;
    if let Some(pid) = settings.renew_while
        && let Err(error) = spawn_renewer(global, &context, &lock, pid)
    {
        releasing::report_release(&client, &lock);
        return Err(Failure::os(format!(
            "cannot start the renewer for --renew-while: {error}; the lock was released"
        )));
    }
    let text = render(
        settings.format,
        key,
        lock.token(),
        Some(&lock),
        Some(&holder),
        fence,
    );
    if let Err(failure) = hand_over(&signals, text, lock.validity()) {
        // Nobody has the token: give the lock back (a renewer finds it gone and stops).
        releasing::report_release(&client, &lock);
        if failure.message.is_empty() {
            return Err(failure);
        }
        record();
        return Err(Failure::new(
            failure.code,
            format!("{}; the lock was released", failure.message),
        ));
    }
    record();
    late.finish();
    Ok(exit::OK)
}

/// Prints the token as a bounded step (see `bounded`): whoever reads standard output must take
/// it within the lock's validity, after which it is worth nothing, and a terminating signal
/// meanwhile ends the wait at once (128+N, quietly, as for a wait for the lock).
fn hand_over(
    signals: &acquiring::Signals,
    text: String,
    validity: Duration,
) -> Result<(), Failure> {
    match bounded(Some(signals), validity, move || output::print_all(&text)) {
        Ended::Done(printed) => printed,
        Ended::Signalled(signal) => {
            log::info!(
                "{} while handing the token over: the lock is released",
                crate::supervise::signals::name(signal)
            );
            Err(Failure::new(exit::killed_by(signal), ""))
        }
        Ended::Abandoned(why) => Err(Failure::os(format!(
            "cannot write the token to standard output: {why}, the lock's validity (is anything \
             reading it?)"
        ))),
    }
}

/// The fencing token of the enclosing `run --fence` whose lock is re-used, if it has one.
fn inherited_fence() -> Result<Option<u64>, Failure> {
    let Some(fence) = config::env::text(config::env::FENCE_ENV)? else {
        return Ok(None);
    };
    fence.trim().parse().map(Some).map_err(|_| {
        Failure::config(format!(
            "${} is set but is not a number: it is the fencing token of an enclosing \
             `redlock run --fence`; unset it",
            config::env::FENCE_ENV
        ))
    })
}

/// The lock as `--format` asks.
fn render(
    format: Format,
    key: &str,
    token: &str,
    lock: Option<&Lock>,
    holder: Option<&Holder>,
    fence: Option<u64>,
) -> String {
    let validity_ms = lock.map(|l| l.validity().as_millis() as u64);
    match format {
        Format::Plain => format!("{token}\n"),
        Format::Env => {
            let mut out = format!(
                "export REDLOCK_KEY={}\nexport REDLOCK_TOKEN={}\n",
                quote(key),
                quote(token)
            );
            if let Some(ms) = validity_ms {
                out.push_str(&format!("export REDLOCK_VALIDITY_MS={ms}\n"));
            }
            if let Some(fence) = fence {
                out.push_str(&format!("export REDLOCK_FENCE={fence}\n"));
            }
            out
        }
        Format::Json => {
            let value = json!({
                "key": key,
                "token": token,
                "nested": token.starts_with(NESTED_PREFIX),
                "ttl_ms": lock.map(|l| l.timing().ttl.as_millis() as u64),
                "validity_ms": validity_ms,
                "fence": fence,
                "limit": lock.and_then(|l| l.kind().limit()),
                "shared": lock.is_some_and(|l| l.kind().is_reader()),
                "holder": holder.map(Holder::to_json),
            });
            format!("{}\n", crate::escape::json(&value))
        }
    }
}

/// Single-quotes `text` for a POSIX shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Starts the detached `redlock __renew-while` that keeps `lock` alive while `pid` lives. It
/// resolves its settings as this process did: the same server list, config file, password
/// source and TLS files. The token and the server URLs (which may carry passwords) travel in
/// its environment, never on its command line. It gets its own session, so a Ctrl-C meant for the
/// script does not kill it before it can release. It holds none of the caller's descriptors: a
/// caller that reads our stdout or stderr to the end (`$(...)`, a CI runner, a test harness) must
/// not wait for the renewer, which lives as long as the watched process.
fn spawn_renewer(
    global: &GlobalArgs,
    context: &Context,
    lock: &Lock,
    pid: i32,
) -> std::io::Result<()> {
    let timing = lock.timing();
    let servers: Vec<&str> = context
        .masters
        .iter()
        .map(Master::url_with_secrets)
        .collect();
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.arg(RENEW_WHILE);
    let forwarded = [
        ("--config", &context.config_file),
        ("--password-file", &global.password_file),
        ("--tls-ca-cert", &global.tls_ca_cert),
        ("--tls-cert", &global.tls_cert),
        ("--tls-key", &global.tls_key),
    ];
    for (flag, path) in forwarded {
        if let Some(path) = path {
            cmd.arg(flag).arg(path);
        }
    }
    cmd.arg(format!("--key={}", lock.key()))
        .arg(format!("--ttl={}ms", timing.ttl.as_millis()))
        .arg(format!(
            "--node-timeout={}ms",
            timing.node_timeout.as_millis()
        ))
        .arg(format!("--drift-factor={}", timing.drift_factor))
        .arg(format!("--pid={pid}"))
        .arg(format!(
            "--valid-until-ns={}",
            watch::instant_to_monotonic_ns(lock.validity_end())
        ))
        .env("REDLOCK_SERVERS", servers.join(","))
        .env("REDLOCK_TOKEN", lock.token())
        .env_remove("REDLOCK_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let detach = || {
        // SAFETY: setsid takes no arguments; it is async-signal-safe.
        unsafe { libc::setsid() };
        Ok(())
    };
    // SAFETY: the closure only calls setsid, which is async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(detach);
    }
    cmd.spawn().map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_format_quotes_for_eval() {
        let out = render(Format::Env, "it's", "tok", None, None, None);
        assert_eq!(
            out,
            "export REDLOCK_KEY='it'\\''s'\nexport REDLOCK_TOKEN='tok'\n"
        );
    }
}
