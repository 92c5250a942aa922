//! `--order` from a command: what an outdated run says, whether the read before waiting or
//! the raise once the lock is taken found it (both steps of `Redlock::take_in_turn`; see
//! the lock's `order` for why the raise decides), and the raise under an enclosing hold.

use crate::config::LockSettings;
use crate::exit::{self, Failure};
use crate::lock::{OrderError, Redlock};
use crate::metrics::{Observations, Outcome};

use super::wording;

/// Under an enclosing redlock's hold of the same lock (re-entrance), where nothing is taken:
/// the order is raised under that hold, as the enclosing run's own was, since this run's
/// command runs there too (see the lock's `order`). Outdated below the highest order. A nested
/// run records no metrics (the enclosing one does), so what it observes is dropped.
pub fn raise_under_enclosing_hold(
    client: &Redlock,
    settings: &LockSettings,
    quiet: bool,
) -> Result<(), Failure> {
    let Some(order) = settings.order else {
        return Ok(());
    };
    let (key, node_timeout) = (&settings.key, settings.timing.node_timeout);
    client
        .raise_inherited_order(key, order, node_timeout)
        .map_err(|error| {
            let mut unrecorded = Observations::of(key, settings.shared);
            failure(
                key,
                order,
                error,
                settings,
                quiet,
                &mut unrecorded,
                Stage::Nested,
            )
        })
}

/// What was asked of the order register when it failed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Read before waiting.
    Read,
    /// Raised once the lock was taken (and it has been released).
    Raised,
    /// Raised under an enclosing redlock's hold (nothing was taken, nothing released).
    Nested,
}

/// The failure for `error`, counted in `seen`: outdated exits with `--outdated-exit-code`
/// (quietly with `--quiet`, as a conflict), the rest as any failure of the masters.
pub fn failure(
    key: &str,
    order: u64,
    error: OrderError,
    settings: &LockSettings,
    quiet: bool,
    seen: &mut Observations,
    stage: Stage,
) -> Failure {
    let released = if stage == Stage::Raised {
        " (the lock was released)"
    } else {
        ""
    };
    match error {
        OrderError::Outdated { ran } => {
            seen.outcomes.push(Outcome::Outdated);
            let message = format!(
                "order {order} is outdated on lock {key:?}: order {ran} already took it, so \
                 this run skips its command{released} (exit {}, see --outdated-exit-code)",
                settings.outdated_exit_code
            );
            Failure::new(
                settings.outdated_exit_code,
                if quiet { String::new() } else { message },
            )
        }
        OrderError::Unreachable { failures } => {
            seen.outcomes.push(Outcome::Unavailable);
            let how_failed = wording::how_failed(failures.iter().map(|f| &f.error));
            let what = match stage {
                Stage::Raised => format!(
                    "took lock {key:?} but too many masters {how_failed} when its order register \
                     was raised to {order}, so this run skips its command (the lock was released)"
                ),
                Stage::Nested => format!(
                    "too many masters {how_failed} when the order register of lock {key:?} was \
                     raised to {order} under the enclosing redlock's hold, so this run skips its \
                     command"
                ),
                Stage::Read => format!(
                    "too many masters {how_failed} when the order register of lock {key:?} was \
                     read for order {order}, so this run skips its command"
                ),
            };
            wording::masters_failed(&what, &failures)
        }
        OrderError::Expired => Failure::new(
            exit::LOCK_LOST,
            format!(
                "lock {key:?} expired before its order register was raised to {order}; raise \
                 --ttl"
            ),
        ),
        OrderError::NotAlone => Failure::usage(format!(
            "--order on {key:?} needs the lock held alone, not a slot or a reader's share"
        )),
    }
}
