//! The Redlock client: the operations a caller uses (acquire, extend, release, inspect, fence),
//! each one or more rounds over the masters (see `round`).
//!
//! The public methods block: `run` is a plain threaded program, and the small runtime inside
//! (single-threaded, driven by the caller) only carries the connections.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::attempt::{Refused, retry_delay};
use super::cancel::Cancel;
use super::exclusive::{self, release_token};
use super::fence::{self, FenceError};
use super::held::{Kind, Lock, Timing};
use super::late;
use super::queue::{self, InLine, Waiter};
use super::slots::{self, release_slot};
use super::undo::Purpose;
use crate::lock::quorum::outcome::{
    AcquireError, AttemptFailure, ExtendError, Inspection, MasterFailure, Released,
};
use crate::lock::quorum::round::{Masters, Until};
use crate::lock::quorum::tally::Decision;
use crate::lock::read::probe::{Probe, probe_endpoint};
use crate::lock::read::scan::{self, FoundLock, Scan, ScanOptions, StrayKey, StrayName};
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::keys::{self, Names};
use crate::lock::scripts::lock::{EXTEND, INSPECT, Lua, binary_vote, inspected};
use crate::lock::wire::endpoint::Endpoint;
use crate::lock::wire::master::Master;

/// A Redlock client over a fixed set of masters.
pub struct Redlock {
    pub(in crate::lock) masters: Masters,
    /// Shut down by [`Drop`], never dropped as a field: see there.
    pub(in crate::lock) runtime: std::mem::ManuallyDrop<tokio::runtime::Runtime>,
}

impl Drop for Redlock {
    /// Closes the connections while the runtime that registered their sockets is still there,
    /// then shuts the runtime down without waiting for its blocking threads. A name lookup
    /// (`getaddrinfo`, which tokio runs on such a thread) outlives the node timeout that
    /// abandoned it when the resolver hangs, and dropping the runtime would wait for it: redlock
    /// would not exit, whatever signal it got.
    fn drop(&mut self) {
        drop(std::mem::take(&mut self.masters.nodes));
        // SAFETY: `runtime` is taken exactly once, here, and `self` is never used after `drop`.
        let runtime = unsafe { std::mem::ManuallyDrop::take(&mut self.runtime) };
        runtime.shutdown_background();
    }
}

impl Redlock {
    /// Every lock on the masters that redlock's own keys name (see `scan`): SCAN each master
    /// for their names, within `options.timeout`. Read them with [`Redlock::read_locks`].
    pub fn scan(&self, options: &ScanOptions) -> Scan {
        self.runtime.block_on(scan::scan(&self.masters, options))
    }

    /// Reads the locks `keys` (a batch of [`Scan::locks`]) on every master, by the scan's
    /// deadline: call it batch by batch, so that memory holds one batch of reads.
    pub fn read_locks(&self, scan: &Scan, keys: &[String]) -> Vec<FoundLock> {
        self.runtime
            .block_on(scan::read_locks(&self.masters, scan, keys))
    }

    /// Reads the TTLs of `strays` (a batch of [`Scan::strays`]), by the scan's deadline.
    pub fn read_strays(&self, scan: &Scan, strays: &[StrayName]) -> Vec<StrayKey> {
        self.runtime
            .block_on(scan::read_strays(&self.masters, scan, strays))
    }
}

impl Redlock {
    /// A client for `masters`; connects lazily, all masters at once, on the first request.
    /// `tls` is required when a master is `rediss://`.
    pub fn new(
        masters: Vec<Master>,
        tls: Option<Arc<rustls::ClientConfig>>,
    ) -> std::io::Result<Redlock> {
        if masters.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "no Redis master given",
            ));
        }
        let nodes = masters
            .into_iter()
            .map(|m| Endpoint::new(m, tls.clone()))
            .collect();
        // No I/O thread: connections are driven by whichever thread is inside a request
        // (`block_on`). Between requests nothing moves, and nothing needs to: a round that must
        // reach every master (a release) waits until its requests are written, and anything
        // still queued travels, in order, with the next request.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        Ok(Redlock {
            masters: Masters { nodes },
            runtime: std::mem::ManuallyDrop::new(runtime),
        })
    }

    pub fn masters(&self) -> impl Iterator<Item = &Master> {
        self.masters.nodes.iter().map(|n| &n.master)
    }

    pub fn quorum(&self) -> usize {
        self.masters.quorum()
    }

    /// Takes the lock on a majority, retrying until `wait` is spent (`Duration::ZERO`: one
    /// attempt; a wait too long for the clock to represent, such as `Duration::MAX`: until it
    /// is taken or cancelled). A refused caller that will wait joins the key's fair queue (see
    /// `queue`) and takes the lock in its turn. `on_retry` hears about each failed attempt
    /// that will be retried, so a caller can say who is in the way.
    pub fn acquire(
        &self,
        key: &str,
        timing: Timing,
        holder: Option<&Holder>,
        wait: Duration,
        cancel: &Cancel,
        on_retry: &mut dyn FnMut(&AttemptFailure),
    ) -> Result<Lock, AcquireError> {
        self.take(key, Kind::Lock, timing, holder, wait, cancel, on_retry)
    }

    /// The wait of [`Redlock::acquire`] and [`Redlock::acquire_slot`]: attempts as a newcomer
    /// until one is taken, a refusal brings a ticket (then the turn comes in the fair queue),
    /// the wait is spent, or `cancel` fires. Only the attempt and its clean-up differ by kind.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::lock) fn take(
        &self,
        key: &str,
        kind: Kind,
        timing: Timing,
        holder: Option<&Holder>,
        wait: Duration,
        cancel: &Cancel,
        on_retry: &mut dyn FnMut(&AttemptFailure),
    ) -> Result<Lock, AcquireError> {
        // `None`: never give up (only `cancel` ends the wait).
        let give_up_at = Instant::now().checked_add(wait);
        let names = Names::of(key);
        let will_wait = !wait.is_zero();
        self.runtime.block_on(async {
            let mut attempt = 0u32;
            loop {
                if cancel.is_cancelled() {
                    return Err(AcquireError::Cancelled);
                }
                let token = kind.new_token();
                let since = Instant::now();
                let attempted = async {
                    match kind {
                        Kind::Lock | Kind::Reader => {
                            exclusive::attempt(
                                &self.masters,
                                key,
                                &names,
                                &token,
                                timing,
                                holder,
                                will_wait,
                            )
                            .await
                        }
                        Kind::Slot { limit } => {
                            slots::attempt_slot(
                                &self.masters,
                                key,
                                &token,
                                limit,
                                timing,
                                holder,
                                will_wait,
                            )
                            .await
                        }
                    }
                };
                let outcome = tokio::select! {
                    outcome = attempted => Some(outcome),
                    () = cancel.cancelled() => None,
                };
                let (failure, ticket) = match outcome {
                    Some(Ok(lock)) => return Ok(lock),
                    Some(Err(Refused::Failed(failure, ticket))) => (failure, ticket),
                    Some(Err(Refused::Conflict(conflict))) => {
                        return Err(AcquireError::Conflict(conflict));
                    }
                    None => {
                        // Requests of the interrupted attempt may have reached some masters.
                        match kind {
                            Kind::Lock | Kind::Reader => {
                                release_token(
                                    &self.masters,
                                    key,
                                    &names,
                                    &token,
                                    timing,
                                    Purpose::Abandon,
                                )
                                .await;
                            }
                            Kind::Slot { limit } => {
                                release_slot(
                                    &self.masters,
                                    key,
                                    &token,
                                    limit,
                                    timing,
                                    Purpose::Abandon,
                                    None,
                                )
                                .await;
                            }
                        }
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
                        kind,
                    };
                    let waited =
                        queue::wait_in_line(&self.masters, waiter, give_up_at, cancel, on_retry);
                    match waited.await {
                        InLine::Took(lock) => return Ok(lock),
                        InLine::GaveUp(failure) => return Err(AcquireError::Failed(failure)),
                        InLine::Cancelled => return Err(AcquireError::Cancelled),
                        InLine::Conflict(conflict) => return Err(AcquireError::Conflict(conflict)),
                        // Join again, at the back, with a new token.
                        InLine::LostPlace => {
                            attempt = 0;
                            continue;
                        }
                    }
                }
                // Not queued (too few masters answered): back off and try again.
                let left = give_up_at.map_or(Duration::MAX, |at| at - now);
                let delay = retry_delay(attempt).min(left);
                attempt = attempt.saturating_add(1);
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = cancel.cancelled() => return Err(AcquireError::Cancelled),
                }
            }
        })
    }

    /// Extends `lock` to its full TTL again, measured from the start of this round. Counts only
    /// if a majority confirmed before the current validity ran out. Never deletes anything.
    pub fn extend(&self, lock: &mut Lock) -> Result<(), ExtendError> {
        match lock.kind {
            Kind::Slot { limit } => return self.extend_slot(lock, limit),
            Kind::Reader => return self.extend_share(lock),
            Kind::Lock => {}
        }
        let keys = [lock.key(), &keys::holder(lock.key())];
        let ttl_ms = lock.timing.ttl_ms();
        let args: [&[u8]; 2] = [lock.token.as_bytes(), &ttl_ms];
        let renewed =
            self.runtime
                .block_on(self.renewal(lock, self.quorum(), (&EXTEND, &keys, &args)));
        lock.validity_end = renewed?;
        Ok(())
    }

    /// One extension round of `lock` (`request`: its script, keys and arguments), decided by
    /// `quorum`: the new validity end, measured from the start of the round, if the quorum
    /// confirmed before the current validity ran out.
    pub(in crate::lock) async fn renewal(
        &self,
        lock: &Lock,
        quorum: usize,
        (script, keys, args): (&Lua, &[&str], &[&[u8]]),
    ) -> Result<Instant, ExtendError> {
        let start = Instant::now();
        // Past the validity an answer no longer counts, so there is no point waiting longer
        // (a lock built from a token has no known validity: give it one node timeout).
        let node_deadline = start + lock.timing.node_timeout;
        let deadline = if lock.validity_end > start {
            node_deadline.min(lock.validity_end)
        } else {
            node_deadline
        };
        let round = self
            .masters
            .round_with(quorum, deadline, Until::Conclusive, binary_vote, |node| {
                node.eval(script, keys, args)
            })
            .await;
        self.masters
            .trace("extend", lock.key(), &round, start.elapsed());
        let in_time = lock.validity_end <= start || Instant::now() < lock.validity_end;
        match round.tally.decision() {
            Decision::Won if in_time => Ok(lock.timing.validity_end(start)),
            _ if round.tally.refused_by_majority() => Err(ExtendError::Gone),
            _ => Err(ExtendError::Unconfirmed {
                failures: round.failures(&self.masters),
            }),
        }
    }

    /// Makes the lock expire `remaining` from now instead of deleting it (compare-and-pexpire on
    /// every master). True when a majority confirmed.
    pub fn expire_in(&self, lock: &Lock, remaining: Duration) -> bool {
        let remaining = remaining.max(Duration::from_millis(1));
        match lock.kind {
            Kind::Slot { limit } => return self.expire_slot_in(lock, limit, remaining),
            Kind::Reader => return self.expire_share_in(lock, remaining),
            Kind::Lock => {}
        }
        let keys = [lock.key(), &keys::holder(lock.key())];
        let ms = remaining.as_millis().to_string().into_bytes();
        let args: [&[u8]; 2] = [lock.token.as_bytes(), &ms];
        self.runtime
            .block_on(self.expiry(lock, self.quorum(), (&EXTEND, &keys, &args)))
    }

    /// One round that sets `lock`'s expiry (`request`: its script, keys and arguments); true
    /// when `quorum` masters confirmed.
    pub(in crate::lock) async fn expiry(
        &self,
        lock: &Lock,
        quorum: usize,
        (script, keys, args): (&Lua, &[&str], &[&[u8]]),
    ) -> bool {
        let start = Instant::now();
        let round = self
            .masters
            .round_with(
                quorum,
                start + lock.timing.node_timeout,
                Until::DecidedAndSent,
                binary_vote,
                |node| node.eval(script, keys, args),
            )
            .await;
        self.masters
            .trace("expire", lock.key(), &round, start.elapsed());
        round.tally.decision() == Decision::Won
    }

    /// Deletes the lock on every master where it still holds our token, and tells the next
    /// waiter. Bounded by one per-node timeout; does not wait for slow masters once a majority
    /// answered and every master has been sent the request.
    pub fn release(&self, lock: &Lock) -> Released {
        if let Kind::Slot { limit } = lock.kind {
            return self.runtime.block_on(release_slot(
                &self.masters,
                lock.key(),
                lock.token(),
                limit,
                lock.timing,
                Purpose::Release,
                None,
            ));
        }
        let names = Names::of(lock.key());
        self.runtime.block_on(release_token(
            &self.masters,
            lock.key(),
            &names,
            lock.token(),
            lock.timing,
            Purpose::Release,
        ))
    }

    /// Whether [`Redlock::late_refusals`] has any master to ask (cheap: no I/O).
    pub fn has_unheard(&self, lock: &Lock) -> bool {
        late::unheard(&self.masters, lock.refusals())
            .next()
            .is_some()
    }

    /// The masters that `lock`'s round did not hear from because they were still being
    /// connected to, asked again for at most one node timeout: those that refused for a
    /// configuration reason, and why (see `late`). Blocks; call it off the path that waits.
    pub fn late_refusals(&self, lock: &Lock) -> Vec<MasterFailure> {
        if !self.has_unheard(lock) {
            return Vec::new();
        }
        self.runtime.block_on(late::late_refusals(
            &self.masters,
            lock.key(),
            lock.refusals(),
            lock.timing.node_timeout,
        ))
    }

    /// Reads the lock's state and fencing counter on every master (waits for all of them, up
    /// to one node timeout).
    pub fn inspect(&self, key: &str, node_timeout: Duration) -> Vec<Inspection> {
        let names = Names::of(key);
        let fence = keys::fence(key);
        let keys = [
            key,
            &names.holder,
            &fence,
            &names.queue,
            &names.lease,
            &names.waiters,
        ];
        let read = self
            .masters
            .read_everywhere("inspect", key, &INSPECT, &keys, node_timeout);
        self.runtime
            .block_on(read)
            .into_iter()
            .map(|(master, answer)| {
                let found = inspected(Some(answer));
                Inspection {
                    master: master.clone(),
                    state: found.state,
                    fence: found.fence,
                    fence_problem: found.fence_problem,
                    queue: found.queue,
                    waiting: found.waiting,
                }
            })
            .collect()
    }

    /// Obtains the next fencing token for `lock`, while it is held (see `fence`). A semaphore
    /// slot gets none: [`FenceError::NotExclusive`].
    pub fn fence(&self, lock: &Lock) -> Result<u64, FenceError> {
        self.runtime.block_on(fence::grant(&self.masters, lock))
    }

    /// Asks every master at once what Redlock's safety depends on (see `probe`), waiting at
    /// most `timeout` for each request.
    pub fn probe(&self, timeout: Duration) -> Vec<Probe> {
        self.runtime.block_on(futures_util::future::join_all(
            self.masters
                .nodes
                .iter()
                .map(|node| probe_endpoint(node, timeout)),
        ))
    }
}

#[cfg(test)]
mod tests;
