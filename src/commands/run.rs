//! `redlock run`: lock, run, renew, release, exit with the command's status.

use std::path::Path;

use crate::cli::{GlobalArgs, RunArgs};
use crate::config;
use crate::exit::{self, Failure};
use crate::lock::{Holder, Taken};
use crate::metrics::{Observations, Outcome};
use crate::notify::Notifier;
use crate::supervise::renew::LossReason;
use crate::supervise::{self, Ending, Lease, StopReason};

use super::{acquiring, bounded, open_client, ordering, reentrance, releasing};

pub fn run(global: &GlobalArgs, args: RunArgs) -> Result<i32, Failure> {
    let context = config::context(global)?;
    let metrics_file = config::metrics_file(&args.metrics, &context.defaults)?;
    let settings = config::run_settings(args, &context.defaults)?;
    context.warn();
    let notify = Notifier::from_env(settings.speaker);
    notify.status(&format!(
        "connecting to the masters for lock {:?}",
        settings.lock.key
    ));
    let signals = acquiring::listen_for_signals()?;
    let client = open_client(&context)?;
    let words: Vec<String> = settings
        .command
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();

    let key = &settings.lock.key;
    let node_timeout = settings.lock.timing.node_timeout;
    if reentrance::inherited_lock(&client, key, settings.lock.kind(), node_timeout)?.is_some() {
        // The command runs under the enclosing redlock's hold, so its order is raised there:
        // the enclosing run may have taken the lock without one, or with a lower one.
        ordering::raise_under_enclosing_hold(&client, &settings.lock, global.quiet)?;
        if settings.lock.fence && config::env::text(config::env::FENCE_ENV)?.is_none() {
            log::warn!(
                "warning: --fence: the enclosing redlock took lock {key:?} without --fence, so \
                 there is no fencing token to pass on"
            );
        }
        let ending = supervise::supervise(
            &client,
            Lease::Inherited,
            &settings.command,
            settings.supervise,
            (signals.events, &signals.inbox),
            &notify,
        );
        notify.stopping(&ended(&ending, "the enclosing redlock's lock"));
        return finish(ending, &words);
    }

    let holder = Holder::this_process(&words)
        .with_note(acquiring::note(&settings.lock))
        .with_order(settings.lock.order);
    let mut seen = Observations::of(key, settings.lock.shared);
    // A signal during the write cuts it short and changes nothing else: the command's status
    // (or the failure) is what redlock exits with, at once.
    let record = |seen: &Observations| {
        bounded::record_metrics(Some(&signals), metrics_file.as_deref(), seen);
    };
    let taken = acquiring::take_in_turn(
        &client,
        &settings.lock,
        &holder,
        &signals,
        global.quiet,
        (&mut seen, &notify),
    );
    let (
        Taken {
            lock,
            taken_at: started,
            fence,
        },
        late,
    ) = taken.inspect_err(|failure| {
        record(&seen);
        notify.stopping(&format!(
            "gave up taking lock {key:?} (exit {})",
            failure.code
        ));
    })?;
    let ending = supervise::supervise(
        &client,
        Lease::Held(&lock, fence),
        &settings.command,
        settings.supervise,
        (signals.events.clone(), &signals.inbox),
        &notify,
    );
    let lost = matches!(
        ending,
        Ending::Stopped {
            reason: StopReason::LockLost(_),
            ..
        }
    );
    let turn_end = turn_end(&ending);
    let released = match settings.hold_min {
        Some(hold) if !lost && started.elapsed() < hold => {
            let then = format!("leaving lock {key:?} to expire after --hold-min");
            notify.stopping(&ended(&ending, &then));
            releasing::hold_until(&client, &lock, hold - started.elapsed(), &turn_end)
        }
        _ => {
            notify.stopping(&ended(&ending, &format!("releasing lock {key:?}")));
            Some(releasing::report_end(&client, &lock, &turn_end))
        }
    };
    // A force the command outran is found by its release (see `supervise::revoked`).
    let ending = ending.after_release(&lock, released.as_ref());
    late.finish();
    seen.held = Some(started.elapsed());
    match &ending {
        Ending::Exited(status) => {
            if status.shell_code() == exit::OK {
                seen.success_at = Some(std::time::SystemTime::now());
            }
            if released.is_some() {
                seen.outcomes.push(Outcome::Released);
            }
        }
        // Lost to `release --force`: counted as its own outcome, in place of `lost`, whether
        // a renewal or the release found it.
        Ending::Stopped {
            reason: StopReason::LockLost(LossReason::Revoked(_)),
            ..
        }
        | Ending::Revoked { .. } => seen.outcomes.push(Outcome::Revoked),
        Ending::Stopped {
            reason: StopReason::LockLost(_),
            ..
        } => seen.outcomes.push(Outcome::Lost),
        Ending::Stopped {
            reason: StopReason::MaxDuration(_),
            ..
        } => seen.outcomes.push(Outcome::MaxDuration),
        _ => {}
    }
    record(&seen);
    finish(ending, &words)
}

/// systemd's last STATUS=: how the command ended, and what redlock does now (`then`).
fn ended(ending: &Ending, then: &str) -> String {
    match ending {
        Ending::Exited(exit) => format!("the command exited ({}); {then}", exit.shell_code()),
        Ending::Stopped { reason, .. } => format!("the command was stopped: {reason}; {then}"),
        Ending::Revoked { .. } => format!("the lock was revoked; {then}"),
        Ending::NotStarted(error) => format!("the command could not start ({error}); {then}"),
    }
}

/// The exit code for how the command ended.
fn finish(ending: Ending, words: &[String]) -> Result<i32, Failure> {
    match ending {
        Ending::Exited(exit) => Ok(exit.shell_code()),
        // The stop (or the revocation the release found) was reported on stderr when it
        // happened.
        Ending::Stopped {
            reason: StopReason::LockLost(_),
            ..
        }
        | Ending::Revoked { .. } => Err(Failure::new(exit::LOCK_LOST, "")),
        Ending::Stopped {
            reason: StopReason::MaxDuration(_),
            ..
        } => Err(Failure::new(exit::MAX_DURATION, "")),
        Ending::NotStarted(error) => {
            let program = words.first().map_or("", String::as_str);
            let code = supervise::child::spawn_failure_code(&error);
            let message =
                if code == exit::NOT_FOUND && program.contains('/') && Path::new(program).is_file()
                {
                    // The file is there: what is missing is the interpreter its #! line names.
                    format!(
                        "cannot execute {program}: the interpreter on its #! line was not found \
                     (check that line)"
                    )
                } else if code == exit::NOT_FOUND {
                    format!("command not found: {program} (check the name and $PATH)")
                } else {
                    format!("cannot execute {program}: {error} (is it an executable file?)")
                };
            Err(Failure::new(code, message))
        }
    }
}

/// How the turn ended, as the key's history records it (see `lock::Ending`).
fn turn_end(ending: &Ending) -> crate::lock::Ending {
    use crate::lock::Ending as Turn;
    use crate::supervise::child::Exit;
    match ending {
        Ending::Stopped {
            reason: StopReason::LockLost(_),
            ..
        } => Turn::Lost,
        Ending::Exited(exit)
        | Ending::Stopped { child: exit, .. }
        | Ending::Revoked { child: exit, .. } => match exit {
            Exit::Code(code) => Turn::Exited(*code),
            Exit::Signal(signal) => Turn::Signalled(*signal),
        },
        // As a shell says it: 127 not found, 126 not executable.
        Ending::NotStarted(error) => Turn::Exited(supervise::child::spawn_failure_code(error)),
    }
}
