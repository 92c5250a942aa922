//! The Redlock client: the operations a caller uses (acquire, extend, release, read a key,
//! fence), each one or more rounds over the masters (see `round`), for a lock of any kind: each
//! operation asks the kind's seam (see `seam`) and never which kind it is. The one `impl
//! Redlock` of the crate.
//!
//! The public methods block: `run` is a plain threaded program, and the small runtime inside
//! (single-threaded, driven by the caller) only carries the connections.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cancel::Cancel;
use super::fence::{self, FenceError};
use super::held::{Lock, Timing};
use super::in_turn::{Steps, TakeError, TakeObserver, Taken};
use super::late;
use super::order::{self, OrderError};
use super::release::release;
use super::revoke::{self, Forced};
use super::seam::{Holding, Request};
use super::undo::Purpose;
use super::{renewal, seam, take};
use crate::lock::quorum::outcome::{
    AcquireError, AttemptFailure, ExtendError, MasterFailure, Released,
};
use crate::lock::quorum::round::Masters;
use crate::lock::quorum::tally::slot_quorum;
use crate::lock::read::history::{KeyHistory, read_history};
use crate::lock::read::key::state::KeyState;
use crate::lock::read::key::{KeyRead, read_key};
use crate::lock::read::probe::{Probe, probe_endpoint};
use crate::lock::read::scan::{self, FoundLock, Scan, ScanOptions, StrayKey, StrayName};
use crate::lock::read::watch::{
    self,
    changes::{Change, Observation},
};
use crate::lock::scripts::history::Ending;
use crate::lock::scripts::holder::Holder;
use crate::lock::scripts::keys::Names;
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

    /// The number of this client's masters a slot of a semaphore of `limit` needs.
    pub fn slot_quorum(&self, limit: u32) -> usize {
        slot_quorum(self.masters.nodes.len(), limit)
    }

    /// Takes what `request` asks for: the lock on a majority, a reader's share of it on a
    /// majority (alongside other readers, never a writer), or one of `limit` slots of a
    /// semaphore on [`Redlock::slot_quorum`] masters; retrying until `request.wait` is spent
    /// (`Duration::ZERO`: one attempt; a wait too long for the clock to represent, such as
    /// `Duration::MAX`: until it is taken or cancelled). A refused caller that will wait joins
    /// the key's fair queue (see `queue`), readers and writers in one line, and takes it in its
    /// turn. `on_retry` hears about each failed attempt that will be retried, so a caller can
    /// say who is in the way. A key in use as another kind (a lock as a semaphore, a
    /// semaphore of another limit) fails at once with [`AcquireError::Conflict`]. The [`Lock`]
    /// it returns is renewed, released and timed alike, whatever its kind.
    pub fn acquire(
        &self,
        request: &Request<'_>,
        cancel: &Cancel,
        on_retry: &mut dyn FnMut(&AttemptFailure),
    ) -> Result<Lock, AcquireError> {
        let seam = seam(request.kind);
        self.runtime
            .block_on(take::take(&self.masters, &*seam, request, cancel, on_retry))
    }

    /// Takes what `request` asks for as `run` and `acquire` do, with the steps around the take
    /// that `steps` ask for, in their one order (see `in_turn`): the order checked before any
    /// wait, the take ([`Redlock::acquire`]), the order raised under the lock, a fencing token.
    /// `observer` hears of each retry and of the end of the wait. A step after the take that
    /// fails releases the lock before it returns.
    pub fn take_in_turn(
        &self,
        request: &Request<'_>,
        steps: Steps,
        cancel: &Cancel,
        observer: &mut dyn TakeObserver,
    ) -> Result<Taken, TakeError> {
        if let Some(order) = steps.order {
            self.check_order(request.key, order, request.timing.node_timeout)
                .map_err(TakeError::Order)?;
        }
        let asked = Instant::now();
        let taken = self.acquire(request, cancel, &mut |failure| observer.retry(failure));
        let taken_at = Instant::now();
        observer.waited(&taken, taken_at - asked);
        let lock = taken.map_err(TakeError::Acquire)?;
        if let Some(order) = steps.order {
            log::info!(
                "lock {:?}: raising its order register to {order}",
                lock.key()
            );
            if let Err(error) = self.raise_order(&lock, order) {
                // The command never ran: its history says why (outdated), or just released.
                let ending = match error {
                    OrderError::Outdated { ran } => Ending::Outdated(ran),
                    _ => Ending::Released,
                };
                let released = self.release_after(&lock, &ending);
                return Err(TakeError::Raise { error, released });
            }
        }
        let fence = if steps.fence {
            match self.fence(&lock) {
                Ok(token) => Some(token),
                Err(error) => {
                    let released = self.release(&lock);
                    return Err(TakeError::Fence { error, released });
                }
            }
        } else {
            None
        };
        Ok(Taken {
            lock,
            taken_at,
            fence,
        })
    }

    /// Extends `lock` to its full TTL again, measured from the start of this round. Counts only
    /// if its kind's quorum confirmed before the current validity ran out (see `renewal`).
    /// Never deletes anything.
    pub fn extend(&self, lock: &mut Lock) -> Result<(), ExtendError> {
        let seam = seam(lock.kind);
        let call = seam.extend(lock.token(), &lock.timing.ttl_ms());
        let quorum = seam.quorum(self.masters.nodes.len());
        let renewed = self
            .runtime
            .block_on(renewal::renewal(&self.masters, lock, quorum, &call));
        lock.validity_end = renewed?;
        Ok(())
    }

    /// Makes the lock expire `remaining` from now instead of deleting it (compare-and-pexpire on
    /// every master). True when its kind's quorum confirmed.
    pub fn expire_in(&self, lock: &Lock, remaining: Duration) -> bool {
        let remaining = remaining.max(Duration::from_millis(1));
        let seam = seam(lock.kind);
        let ms = remaining.as_millis().to_string().into_bytes();
        let call = seam.extend(lock.token(), &ms);
        let quorum = seam.quorum(self.masters.nodes.len());
        self.runtime
            .block_on(renewal::expiry(&self.masters, lock, quorum, &call))
    }

    /// Deletes the lock on every master where it still holds our token, and tells the next
    /// waiter. Bounded by one per-node timeout; does not wait for slow masters once a majority
    /// answered and every master has been sent the request.
    pub fn release(&self, lock: &Lock) -> Released {
        self.release_after(lock, &Ending::Released)
    }

    /// [`Redlock::release`], recording in the key's history how the turn ended (see
    /// `scripts::history`).
    pub fn release_after(&self, lock: &Lock, ending: &Ending) -> Released {
        let names = Names::of(lock.key());
        let how = ending.word();
        let holding = Holding {
            key: lock.key(),
            names: &names,
            token: lock.token(),
            timing: lock.timing,
            history: lock.history,
            how: &how,
        };
        let seam = seam(lock.kind);
        self.runtime.block_on(release(
            &*seam,
            &self.masters,
            holding,
            Purpose::Release,
            None,
        ))
    }

    /// Revokes whoever holds `key` without their token, as `by` (its note the reason): the
    /// holders are replaced on every master by a record that keeps the key closed until they
    /// said they stopped, or their validity has surely ended (see `revoke`). Waits for every
    /// master, up to one node timeout.
    pub fn force_release(&self, key: &str, by: &Holder, timing: Timing) -> Forced {
        self.runtime
            .block_on(revoke::force(&self.masters, key, by, timing))
    }

    /// Whether [`Redlock::late_refusals`] has any master to ask (cheap: no I/O).
    pub fn has_unheard(&self, lock: &Lock) -> bool {
        late::unheard(&self.masters, &lock.refusals)
            .next()
            .is_some()
    }

    /// The masters that `lock`'s round did not hear from (their answer was not waited for, or
    /// they were still being connected to), asked again for at most one node timeout: those
    /// that refused for a configuration reason, and why (see `late`). Blocks; call it off the
    /// path that waits; `done` ends the wait for the masters that had the round's request.
    pub fn late_refusals(&self, lock: &Lock, done: &Cancel) -> Vec<MasterFailure> {
        if !self.has_unheard(lock) {
            return Vec::new();
        }
        self.runtime.block_on(late::late_refusals(
            &self.masters,
            lock.key(),
            &lock.refusals,
            lock.timing.node_timeout,
            done,
        ))
    }

    /// Reads `key` on every master in one round (waits for all of them, up to one node
    /// timeout): the lock with its queue and fencing counter, a semaphore's slots, the readers,
    /// as [`KeyRead`] gives each to its judge.
    pub fn read_key(&self, key: &str, node_timeout: Duration) -> KeyRead {
        self.runtime
            .block_on(read_key(&self.masters, key, node_timeout))
    }

    /// `key`'s last `limit` turns, newest first, merged from every master's history (see
    /// `read::history`), read in pages of at most one node timeout each.
    pub fn history(&self, key: &str, limit: usize, node_timeout: Duration) -> KeyHistory {
        self.runtime
            .block_on(read_history(&self.masters, key, limit, node_timeout))
    }

    /// What `key` holds, judged as `status` judges it, from one read of every master (see
    /// [`KeyState`]).
    pub fn observe(&self, key: &str, node_timeout: Duration) -> KeyState {
        self.read_key(key, node_timeout).state()
    }

    /// Watches `key` (see `watch`): calls `say` with each change of who holds it, and the read
    /// it was seen in, until `cancel` fires or `say` breaks. Masters that do not answer within
    /// `node_timeout` are reported as a change, never as an error: the watch goes on.
    pub fn watch(
        &self,
        key: &str,
        node_timeout: Duration,
        cancel: &Cancel,
        say: impl FnMut(&Change, &Observation) -> ControlFlow<()>,
    ) {
        self.runtime.block_on(watch::watch(
            &self.masters,
            key,
            node_timeout,
            cancel.cancelled(),
            say,
        ));
    }

    /// Obtains the next fencing token for `lock`, while it is held (see `fence`). Only the lock
    /// gets one: a semaphore slot gets [`FenceError::NotExclusive`], a reader's share
    /// [`FenceError::Shared`], and nothing is asked of the masters for them.
    pub fn fence(&self, lock: &Lock) -> Result<u64, FenceError> {
        seam(lock.kind).fence()?;
        self.runtime.block_on(fence::grant(&self.masters, lock))
    }

    /// Whether a run with `order` is outdated on lock `key` before it waits (see `order`, step
    /// 1): a master of a majority holds a higher order that took the lock.
    pub fn check_order(
        &self,
        key: &str,
        order: u64,
        node_timeout: Duration,
    ) -> Result<(), OrderError> {
        self.runtime
            .block_on(order::check(&self.masters, key, order, node_timeout))
    }

    /// Raises the order register of `lock`, just taken, to `order`, before its command runs
    /// (see `order`, step 2): [`OrderError::Outdated`] when a higher order took it first. Only
    /// the lock has orders: a slot or a share, which others hold beside it, fails as
    /// [`Redlock::fence`] does, with nothing asked of the masters.
    pub fn raise_order(&self, lock: &Lock, order: u64) -> Result<(), OrderError> {
        seam(lock.kind).fence().map_err(|_| OrderError::NotAlone)?;
        self.runtime
            .block_on(order::raise(&self.masters, lock, order))
    }

    /// Raises the order register of `key`, held by an enclosing redlock of this process
    /// (re-entrance), to `order` before the nested command runs (see `order`, step 2).
    pub fn raise_inherited_order(
        &self,
        key: &str,
        order: u64,
        node_timeout: Duration,
    ) -> Result<(), OrderError> {
        self.runtime.block_on(order::raise_inherited(
            &self.masters,
            key,
            order,
            node_timeout,
        ))
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
