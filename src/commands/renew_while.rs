//! `redlock __renew-while` (hidden): the detached renewer left by `acquire --renew-while`.

use std::time::Duration;

use crate::cli::{GlobalArgs, RenewWhileArgs};
use crate::config;
use crate::exit::{self, Failure};
use crate::lock::{Lock, Timing};
use crate::supervise::renew::LossReason;
use crate::supervise::watch::{self, WatchEnd};

use super::{acquiring, open_client, releasing};

pub fn renew_while(global: &GlobalArgs, args: RenewWhileArgs) -> Result<i32, Failure> {
    let token = config::env::text(config::env::TOKEN_ENV)?
        .ok_or_else(|| Failure::usage("__renew-while is internal: it needs REDLOCK_TOKEN"))?;
    let context = config::context(global)?;
    let signals = acquiring::listen_for_signals()?;
    let client = open_client(&context)?;
    let timing = Timing {
        ttl: args.ttl,
        node_timeout: args.node_timeout,
        drift_factor: args.drift_factor,
    };
    let validity_end = watch::monotonic_ns_to_instant(args.valid_until_ns);
    let lock = Lock::with_validity(&args.key, &token, timing, validity_end);
    let every: Duration = args.ttl / 3;
    match watch::renew_while(
        &client,
        lock.clone(),
        args.pid,
        every,
        (signals.events, &signals.inbox),
    ) {
        WatchEnd::WatchedExited | WatchEnd::Signalled(_) => {
            releasing::report_release(&client, &lock);
        }
        // Most often `redlock release` was called: the script gave the lock back.
        WatchEnd::Lost(LossReason::Refused) => {
            log::info!("lock {:?} is no longer held: renewer done", args.key);
        }
        // The script still runs: its own `release` says that it stopped (see `revoke`).
        WatchEnd::Lost(LossReason::Revoked(revocation)) => log::error!(
            "lock {:?} renewed for pid {} was revoked by `redlock release --force` ({}): \
             renewer done",
            args.key,
            args.pid,
            revocation.describe()
        ),
        WatchEnd::Lost(LossReason::Expired | LossReason::Stalled { .. }) => log::error!(
            "lock {:?} renewed for pid {} expired: no renewal reached a majority of masters in time",
            args.key,
            args.pid
        ),
    }
    Ok(exit::OK)
}
