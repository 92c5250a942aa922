//! A revocation that only the release found: how a run ends when `release --force` took its
//! lock away and the command ended by itself before the next renewal could tell.
//!
//! The renewal thread hears of a force at the next renewal (every TTL/3) and the supervisor
//! stops the command (exit 70, see [`super::renew::LossReason::Revoked`]). A command that ends
//! first never meets that renewal, but the release `run` sends next does: a revoked holder's
//! release acknowledges the revocation (the lock's `revoke`), and the release round tells
//! whether the force had taken the hold away, by the same rule as a renewal (fewer than the
//! quorum still had the token; `Released::Acknowledged`'s `taken`).
//!
//! **The decision: such a run exits 70 (`exit::LOCK_LOST`), as if the renewal had found the
//! revocation, and says so in the same one line, with who revoked it and why.** The command's
//! status is known and is named in that line, but it is not what `run` exits with:
//! 1. From the force on, the command ran without the lock. Others were kept out only because
//!    the revocation waits for the revoked holder, not because it held the lock; the section
//!    was not the lock's for its whole length, which is what 70 says.
//! 2. Whoever forced expects the run to count as revoked (rerun the job, page someone). Its
//!    exit must not depend on a race it cannot see: whether the command ended just before or
//!    just after its next renewal. So the same force gives the same exit, the same line and
//!    the same metric (`revoked`) either way.
//! 3. It wins over `--max-duration`'s code too: the lock was taken away while the command
//!    still ran, which is the graver news.
//!
//! `release --token` exits 0 on a revoked token (`commands::release`): a script that sends it
//! decides itself what comes next, and can `extend` first to learn it; `run`'s exit is all its
//! caller gets. A command that never started (126/127) ran no section; a force that reached
//! too few masters to take the hold (`taken` false) took nothing, as a renewal that still won
//! goes on: both keep their exit.

use super::words::Held;
use super::{Ending, StopReason, child::Exit, signals};
use crate::lock::{Lock, Released, Revocation};

impl Ending {
    /// How the run ended, once the release after it (`None`: none was sent, as with
    /// `--hold-min`) has spoken: a command that ended while its lock was revoked ends
    /// [`Ending::Revoked`], said here on one line (see the module header).
    pub fn after_release(self, lock: &Lock, released: Option<&Released>) -> Ending {
        let Some(Released::Acknowledged {
            by, taken: true, ..
        }) = released
        else {
            return self;
        };
        match self {
            Ending::Exited(child)
            | Ending::Stopped {
                reason: StopReason::MaxDuration(_),
                child,
            } => {
                log::error!(
                    event = "revoked", key = lock.key();
                    "{}", line(Held::of(Some(lock)), by.as_deref(), child)
                );
                Ending::Revoked {
                    by: by.clone(),
                    child,
                }
            }
            ending => ending,
        }
    }
}

/// `lock "k": lost the lock: it was revoked by `redlock release --force` (user ops on …,
/// reason "…"); the command had already ended (exit 0), before a renewal could stop it`.
fn line(held: Held<'_>, by: Option<&Revocation>, child: Exit) -> String {
    let who = by.map_or_else(
        || "its record does not say by whom".to_string(),
        Revocation::describe,
    );
    let ended = match child {
        Exit::Code(code) => format!("exit {code}"),
        Exit::Signal(signal) => format!("killed by {}", signals::name(signal)),
    };
    format!(
        "{}{}: it was revoked by `redlock release --force` ({who}); the command had already \
         ended ({ended}), before a renewal could stop it",
        held.context(),
        held.lost()
    )
}
