//! The one wait loop, for a lock of any kind (see `seam`): attempts as a newcomer until one
//! takes it, a refusal brings a ticket (then the turn comes in the fair queue, see `queue`),
//! the wait is spent, or the caller cancels. What an attempt and its clean-up are is the
//! kind's; when to try again is decided here alone.

use std::time::{Duration, Instant};

use super::attempt::{Refused, retry_delay};
use super::cancel::Cancel;
use super::held::Lock;
use super::newcomer;
use super::queue::{self, InLine, Waiter};
use super::release::release;
use super::seam::{Holding, Request, Seam};
use super::undo::Purpose;
use crate::lock::quorum::outcome::{AcquireError, AttemptFailure, Superseded};
use crate::lock::quorum::round::Masters;
use crate::lock::scripts::keys::Names;

/// Takes what `request` asks for, as `seam` takes it (see [`crate::lock::Redlock::acquire`]).
pub(in crate::lock) async fn take(
    masters: &Masters,
    seam: &dyn Seam,
    request: &Request<'_>,
    cancel: &Cancel,
    on_retry: &mut dyn FnMut(&AttemptFailure),
) -> Result<Lock, AcquireError> {
    let (key, timing, holder) = (request.key, request.timing, request.holder);
    // `None`: never give up (only `cancel` ends the wait).
    let give_up_at = Instant::now().checked_add(request.wait);
    let names = Names::of(key);
    let mut attempt = 0u32;
    loop {
        if cancel.is_cancelled() {
            return Err(AcquireError::Cancelled);
        }
        let token = seam.new_token();
        let outcome = tokio::select! {
            outcome = newcomer::attempt(seam, masters, request, &names, &token) => Some(outcome),
            () = cancel.cancelled() => None,
        };
        // A ticket is counted from the end of its round, not its start: it is only the
        // counter's number, no place exists before the first turn, and a refused newcomer
        // that will wait hears every master, so one that never answers holds the round a
        // whole node timeout (`newcomer`). Counted from the start, that node
        // timeout and another spent subscribing left the first turn no time to join with a
        // node timeout of 2 s or more (see `queue`, "A lapsed place is not re-added").
        let since = Instant::now();
        let (failure, ticket) = match outcome {
            Some(Ok(lock)) => return Ok(lock),
            Some(Err(Refused::Failed(failure, ticket))) => (failure, ticket),
            Some(Err(Refused::Conflict(conflict))) => {
                return Err(AcquireError::Conflict(conflict));
            }
            None => {
                // Requests of the interrupted attempt may have reached some masters.
                let holding = Holding {
                    key,
                    names: &names,
                    token: &token,
                    timing,
                    history: request.history,
                    how: "",
                };
                release(seam, masters, holding, Purpose::Abandon, None).await;
                return Err(AcquireError::Cancelled);
            }
        };
        let now = Instant::now();
        if give_up_at.is_some_and(|at| now >= at) {
            return Err(AcquireError::Failed(failure));
        }
        on_retry(&failure);
        if let Some(ticket) = ticket {
            let waiter = Waiter {
                key,
                names: &names,
                token,
                ticket,
                since,
                timing,
                holder,
                seam,
                line: request.line(),
                history: request.history,
            };
            match queue::wait_in_line(masters, waiter, give_up_at, cancel, on_retry).await {
                InLine::Took(lock) => return Ok(lock),
                InLine::GaveUp(failure) => return Err(AcquireError::Failed(failure)),
                InLine::Cancelled => return Err(AcquireError::Cancelled),
                InLine::Conflict(conflict) => return Err(AcquireError::Conflict(conflict)),
                InLine::Superseded(mark) => {
                    return Err(AcquireError::Superseded(Box::new(Superseded {
                        mark,
                        ticket,
                    })));
                }
                InLine::LostPlace => return Err(AcquireError::LostPlace),
                // Backs off below, and arrives again with a new token.
                InLine::Split => {}
                // Join again, at the back, with a new token.
                InLine::Lapsed => {
                    attempt = 0;
                    continue;
                }
            }
        }
        // Not queued (too few masters answered), or a line whose policy was split: back off
        // and try again.
        let left = give_up_at.map_or(Duration::MAX, |at| at - now);
        let delay = retry_delay(attempt).min(left);
        attempt = attempt.saturating_add(1);
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = cancel.cancelled() => return Err(AcquireError::Cancelled),
        }
    }
}
