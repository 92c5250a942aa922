//! The Redlock client: one request to every master at once, a decision at quorum.
//!
//! Each operation is a *round*: the same script sent to all N masters concurrently, each under
//! one per-node deadline (connecting included), with the [`Tally`] deciding as soon as the
//! outcome is certain. The round's futures are polled here, in the caller's task, and dropped
//! when the round stops; see [`Node::eval`] for why that keeps the order of requests on each
//! master. The public methods block: `run` is a plain threaded program, and the small runtime
//! inside (single-threaded, driven by the caller) only carries the connections.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};
use redis::Value;
use tokio::sync::watch;

use super::holder::Holder;
use super::keys;
use super::master::Master;
use super::node::{Node, NodeError};
use super::notices::Notices;
use super::quorum::{Decision, Loss, Tally, Vote, majority};
use super::scripts::{ACQUIRE, EXTEND, INSPECT, RELEASE};
use crate::{debug, info};

/// How long a lock lives and how patient each request is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// The lock's time to live on each master.
    pub ttl: Duration,
    /// How long one master gets to answer one request, connecting included.
    pub node_timeout: Duration,
    /// The share of the TTL set aside for clock drift between this host and the masters.
    pub drift_factor: f64,
}

impl Timing {
    pub const DEFAULT_DRIFT_FACTOR: f64 = 0.01;

    /// The per-node timeout used when none is given: TTL/20, between 10 ms and 1 s. Small next
    /// to the TTL, so a dead master costs little validity; large enough for a slow network.
    pub fn default_node_timeout(ttl: Duration) -> Duration {
        (ttl / 20).clamp(Duration::from_millis(10), Duration::from_secs(1))
    }

    pub fn new(ttl: Duration) -> Timing {
        Timing {
            ttl,
            node_timeout: Self::default_node_timeout(ttl),
            drift_factor: Self::DEFAULT_DRIFT_FACTOR,
        }
    }

    /// Clock drift allowance: TTL × factor + 2 ms (the 2 ms cover the granularity of PX).
    pub fn drift(&self) -> Duration {
        self.ttl.mul_f64(self.drift_factor) + Duration::from_millis(2)
    }

    /// When a lock taken (or extended) by a round that started at `start` stops being valid.
    fn validity_end(&self, start: Instant) -> Instant {
        start + self.ttl.saturating_sub(self.drift())
    }

    fn ttl_ms(&self) -> Vec<u8> {
        self.ttl.as_millis().to_string().into_bytes()
    }
}

/// A lock held on a majority of masters.
#[derive(Clone, Debug)]
pub struct Lock {
    key: String,
    token: String,
    timing: Timing,
    validity_end: Instant,
}

impl Lock {
    /// Rebuilds a lock from its key and token (e.g. printed by `acquire`), to extend or release
    /// it. Its validity is unknown, so it counts as already expired until extended.
    pub fn from_token(key: &str, token: &str, timing: Timing) -> Lock {
        Lock {
            key: key.to_string(),
            token: token.to_string(),
            timing,
            validity_end: Instant::now(),
        }
    }

    /// Rebuilds a lock whose validity end is known (handed over from the process that took it).
    pub fn with_validity(key: &str, token: &str, timing: Timing, validity_end: Instant) -> Lock {
        Lock {
            validity_end,
            ..Lock::from_token(key, token, timing)
        }
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// The instant after which this client may no longer assume it holds the lock.
    pub fn validity_end(&self) -> Instant {
        self.validity_end
    }

    /// What is left of the validity now.
    pub fn validity(&self) -> Duration {
        self.validity_end.saturating_duration_since(Instant::now())
    }
}

/// One master's failure, named for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MasterFailure {
    /// The master, password redacted.
    pub master: String,
    pub error: NodeError,
}

impl std::fmt::Display for MasterFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.master, self.error)
    }
}

/// Why one attempt to take the lock failed.
#[derive(Clone, Debug, PartialEq)]
pub enum AttemptFailure {
    /// Enough masters answered, and too many of them hold the key for someone else.
    Held {
        /// Who holds it, if the holder left a record (other Redlock clients do not).
        holder: Option<Holder>,
        /// The longest time to live seen on a master that refused.
        expires_in: Option<Duration>,
    },
    /// Too few masters answered for a majority.
    Unreachable {
        needed: usize,
        failures: Vec<MasterFailure>,
    },
    /// A majority said yes, but so slowly that no validity was left.
    TooSlow { elapsed: Duration },
}

/// Why `acquire` gave up.
#[derive(Clone, Debug, PartialEq)]
pub enum AcquireError {
    /// The last attempt failed and the wait budget is spent.
    Failed(AttemptFailure),
    /// The wait was cancelled (a signal).
    Cancelled,
}

/// What an extension round found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtendError {
    /// A majority no longer has our token: the lock is gone for good.
    Gone,
    /// No majority confirmed in time; the lock may still be ours. Worth retrying while the
    /// validity lasts.
    Unconfirmed { failures: Vec<MasterFailure> },
}

/// What a release round found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Released {
    /// A majority deleted our key.
    Yes,
    /// A majority did not have our token: the lock had expired or was someone else's.
    NotHeld,
    /// Too few masters answered to tell.
    Unknown { failures: Vec<MasterFailure> },
}

/// The state of a lock key on one master.
#[derive(Clone, Debug, PartialEq)]
pub enum MasterState {
    Free,
    Held {
        token: String,
        /// Remaining time to live; `None` if the key has no TTL (set by something else).
        ttl: Option<Duration>,
        holder: Option<Holder>,
    },
    Unreachable(NodeError),
}

/// What one master has of a lock.
#[derive(Clone, Debug)]
pub struct Inspection {
    pub master: Master,
    pub state: MasterState,
    /// The fencing counter: `None` where no `--fence` grant was ever made.
    pub fence: Option<u64>,
}

/// Wakes a waiting `acquire` when a signal asks redlock to stop. Cheap to clone; `cancel` may
/// be called from any thread, including a signal-handling one.
#[derive(Clone)]
pub struct Cancel {
    sender: Arc<watch::Sender<bool>>,
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel {
            sender: Arc::new(watch::Sender::new(false)),
        }
    }
}

impl Cancel {
    pub fn cancel(&self) {
        self.sender.send_replace(true);
    }

    pub fn is_cancelled(&self) -> bool {
        *self.sender.borrow()
    }

    async fn cancelled(&self) {
        let mut receiver = self.sender.subscribe();
        // The sender lives in self, so the channel cannot close while we wait.
        let _ = receiver.wait_for(|cancelled| *cancelled).await;
    }
}

/// When a round may stop waiting for answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Until {
    /// As soon as the quorum decision is known.
    Decided,
    /// Once decided and every request is on the wire (see `pipe`): a release must reach
    /// even the masters whose answers are not waited for, also when redlock exits right after.
    /// A master still being connected to has no request queued and counts as done: no
    /// acquire can be pending there on this connection, so there is nothing to overtake.
    DecidedAndSent,
    /// Once won, or refused by a majority, or every master answered (or the deadline passed):
    /// a lost extension must tell a lock that is gone from one that is only out of reach, and
    /// an early loss (one refusal, one dead master) says neither.
    Conclusive,
    /// Every master answered (or the deadline passed).
    AllAnswered,
}

impl Until {
    /// Whether a round may stop listening, with every request already queued.
    fn reached(self, tally: &Tally) -> bool {
        match self {
            Until::Decided => tally.decision() != Decision::Undecided,
            Until::Conclusive => tally.decision() == Decision::Won || tally.refused_by_majority(),
            // Decided and written out: checked where the writes can be seen.
            Until::DecidedAndSent | Until::AllAnswered => false,
        }
    }
}

/// The answers of one round, by master index: `Some(Err(Timeout))` where the deadline passed,
/// `None` where the round decided without waiting for that master.
pub(super) struct Round {
    pub(super) tally: Tally,
    pub(super) answers: Vec<Option<Result<Value, NodeError>>>,
}

impl Round {
    pub(super) fn failures(&self, nodes: &[Node]) -> Vec<MasterFailure> {
        self.answers
            .iter()
            .zip(nodes)
            .filter_map(|(answer, node)| match answer {
                Some(Err(error)) => Some(MasterFailure {
                    master: node.master.to_string(),
                    error: error.clone(),
                }),
                Some(Ok(_)) | None => None,
            })
            .collect()
    }
}

/// A Redlock client over a fixed set of masters.
pub struct Redlock {
    // Declared first so that it is dropped first: the connections close while the runtime
    // that registered their sockets is still there.
    pub(super) nodes: Vec<Node>,
    pub(super) runtime: tokio::runtime::Runtime,
}

impl Redlock {
    /// A client for `masters`; connects lazily, all masters at once, on the first request.
    /// `tls` is required when a master is `rediss://`.
    pub fn new(
        masters: Vec<Master>,
        tls: Option<Arc<rustls::ClientConfig>>,
    ) -> anyhow::Result<Redlock> {
        anyhow::ensure!(!masters.is_empty(), "no Redis master given");
        let nodes = masters
            .into_iter()
            .map(|m| Node::new(m, tls.clone()))
            .collect();
        // No I/O thread: connections are driven by whichever thread is inside a request
        // (`block_on`). Between requests nothing moves, and nothing needs to: a round that must
        // reach every master (a release) waits until its requests are written, and anything
        // still queued travels, in order, with the next request.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        Ok(Redlock { nodes, runtime })
    }

    pub fn masters(&self) -> impl Iterator<Item = &Master> {
        self.nodes.iter().map(|n| &n.master)
    }

    pub fn quorum(&self) -> usize {
        majority(self.nodes.len())
    }

    /// Takes the lock on a majority, retrying until `wait` is spent (`Duration::ZERO`: one
    /// attempt): at once when a release notice arrives (see `notices`), otherwise with jittered
    /// backoff. `on_retry` hears about each failed attempt that will be retried, so a caller
    /// can say who is in the way.
    pub fn acquire(
        &self,
        key: &str,
        timing: Timing,
        holder: Option<&Holder>,
        wait: Duration,
        cancel: &Cancel,
        on_retry: &mut dyn FnMut(&AttemptFailure),
    ) -> Result<Lock, AcquireError> {
        let give_up_at = Instant::now() + wait;
        self.runtime.block_on(async {
            let mut attempt = 0u32;
            let mut notices: Option<Notices> = None;
            let mut woken = false;
            loop {
                if cancel.is_cancelled() {
                    return Err(AcquireError::Cancelled);
                }
                let token = new_token();
                let outcome = tokio::select! {
                    outcome = self.attempt(key, &token, timing, holder) => Some(outcome),
                    () = cancel.cancelled() => None,
                };
                let failure = match outcome {
                    Some(Ok(lock)) => return Ok(lock),
                    Some(Err(failure)) => failure,
                    None => {
                        // Requests of the interrupted attempt may have reached some masters.
                        self.release_token(key, &token, timing, false).await;
                        return Err(AcquireError::Cancelled);
                    }
                };
                let now = Instant::now();
                if now >= give_up_at {
                    return Err(AcquireError::Failed(failure));
                }
                on_retry(&failure);
                if notices.is_none() && matches!(failure, AttemptFailure::Held { .. }) {
                    // Someone holds it: listen for its release. It may have come between the
                    // attempt and the subscription, so try once more right away.
                    let deadline = (now + timing.node_timeout).min(give_up_at);
                    notices = Some(Notices::subscribe(&self.nodes, key, deadline).await);
                    continue;
                }
                // Woken by a notice and beaten to it: whoever won may have lost the race too
                // (contenders splitting the vote), so look again soon, before the next notice.
                let delay = if woken {
                    Duration::from_millis(fastrand::u64(1..=5))
                } else {
                    retry_delay(attempt)
                }
                .min(give_up_at - now);
                attempt = attempt.saturating_add(1);
                woken = false;
                let notice = async {
                    match notices.as_mut() {
                        Some(notices) => notices.next().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = notice => {
                        woken = true;
                        attempt = 0;
                    }
                    () = cancel.cancelled() => return Err(AcquireError::Cancelled),
                }
            }
        })
    }

    /// One attempt: SET NX PX on all masters, decide at quorum, and on failure remove whatever
    /// partial hold it left so that contenders do not split the vote until the TTL runs out.
    async fn attempt(
        &self,
        key: &str,
        token: &str,
        timing: Timing,
        holder: Option<&Holder>,
    ) -> Result<Lock, AttemptFailure> {
        let record = holder.map(|h| h.record(token)).unwrap_or_default();
        let start = Instant::now();
        let keys = [key, &keys::holder(key)];
        let ttl_ms = timing.ttl_ms();
        let args: [&[u8]; 3] = [token.as_bytes(), &ttl_ms, record.as_bytes()];
        let round = self
            .round(
                start + timing.node_timeout,
                Until::Decided,
                acquire_vote,
                |node| node.eval(&ACQUIRE, &keys, &args),
            )
            .await;
        let elapsed = start.elapsed();
        self.trace("acquire", key, &round, elapsed);
        let failure = match round.tally.decision() {
            Decision::Won if elapsed + timing.drift() < timing.ttl => {
                info!(
                    "acquired {key:?} on {}/{} masters in {elapsed:.1?}",
                    round.tally.yes(),
                    self.nodes.len()
                );
                return Ok(Lock {
                    key: key.to_string(),
                    token: token.to_string(),
                    timing,
                    validity_end: timing.validity_end(start),
                });
            }
            Decision::Won => AttemptFailure::TooSlow { elapsed },
            Decision::Lost(Loss::Refused) => held_by(&round),
            Decision::Lost(Loss::Unreachable) | Decision::Undecided => {
                AttemptFailure::Unreachable {
                    needed: self.quorum(),
                    failures: round.failures(&self.nodes),
                }
            }
        };
        self.release_token(key, token, timing, false).await;
        Err(failure)
    }

    /// Extends `lock` to its full TTL again, measured from the start of this round. Counts only
    /// if a majority confirmed before the current validity ran out. Never deletes anything.
    pub fn extend(&self, lock: &mut Lock) -> Result<(), ExtendError> {
        self.runtime.block_on(async {
            let start = Instant::now();
            let keys = [lock.key(), &keys::holder(lock.key())];
            let ttl_ms = lock.timing.ttl_ms();
            let args: [&[u8]; 2] = [lock.token.as_bytes(), &ttl_ms];
            // Past the validity an answer no longer counts, so there is no point waiting longer
            // (a lock built from a token has no known validity: give it one node timeout).
            let node_deadline = start + lock.timing.node_timeout;
            let deadline = if lock.validity_end > start {
                node_deadline.min(lock.validity_end)
            } else {
                node_deadline
            };
            let round = self
                .round(deadline, Until::Conclusive, binary_vote, |node| {
                    node.eval(&EXTEND, &keys, &args)
                })
                .await;
            self.trace("extend", lock.key(), &round, start.elapsed());
            let in_time = lock.validity_end <= start || Instant::now() < lock.validity_end;
            match round.tally.decision() {
                Decision::Won if in_time => {
                    lock.validity_end = lock.timing.validity_end(start);
                    Ok(())
                }
                _ if round.tally.refused_by_majority() => Err(ExtendError::Gone),
                _ => Err(ExtendError::Unconfirmed {
                    failures: round.failures(&self.nodes),
                }),
            }
        })
    }

    /// Makes the lock expire `remaining` from now instead of deleting it (compare-and-pexpire on
    /// every master). True when a majority confirmed.
    pub fn expire_in(&self, lock: &Lock, remaining: Duration) -> bool {
        let remaining = remaining.max(Duration::from_millis(1));
        self.runtime.block_on(async {
            let start = Instant::now();
            let keys = [lock.key(), &keys::holder(lock.key())];
            let ms = remaining.as_millis().to_string().into_bytes();
            let args: [&[u8]; 2] = [lock.token.as_bytes(), &ms];
            let round = self
                .round(
                    start + lock.timing.node_timeout,
                    Until::DecidedAndSent,
                    binary_vote,
                    |node| node.eval(&EXTEND, &keys, &args),
                )
                .await;
            self.trace("expire", lock.key(), &round, start.elapsed());
            round.tally.decision() == Decision::Won
        })
    }

    /// Deletes the lock on every master where it still holds our token. Bounded by one per-node
    /// timeout; does not wait for slow masters once a majority answered and every master has
    /// been sent the request.
    pub fn release(&self, lock: &Lock) -> Released {
        self.runtime
            .block_on(self.release_token(lock.key(), lock.token(), lock.timing, true))
    }

    /// Deletes our key on every master; `announce` publishes the release to waiters.
    async fn release_token(
        &self,
        key: &str,
        token: &str,
        timing: Timing,
        announce: bool,
    ) -> Released {
        let start = Instant::now();
        let keys = [key, &keys::holder(key)];
        let channel = if announce {
            keys::released_channel(key)
        } else {
            String::new()
        };
        let args: [&[u8]; 2] = [token.as_bytes(), channel.as_bytes()];
        let round = self
            .round(
                start + timing.node_timeout,
                Until::DecidedAndSent,
                binary_vote,
                |node| node.eval(&RELEASE, &keys, &args),
            )
            .await;
        self.trace("release", key, &round, start.elapsed());
        match round.tally.decision() {
            Decision::Won => Released::Yes,
            Decision::Lost(Loss::Refused) => Released::NotHeld,
            _ => Released::Unknown {
                failures: round.failures(&self.nodes),
            },
        }
    }

    /// Reads the lock's state and fencing counter on every master (waits for all of them, up
    /// to one node timeout).
    pub fn inspect(&self, key: &str, node_timeout: Duration) -> Vec<Inspection> {
        self.runtime.block_on(async {
            let start = Instant::now();
            let keys = [key, &keys::holder(key), &keys::fence(key)];
            let round = self
                .round(
                    start + node_timeout,
                    Until::AllAnswered,
                    |_| Vote::Yes,
                    |node| node.eval(&INSPECT, &keys, &[]),
                )
                .await;
            self.trace("inspect", key, &round, start.elapsed());
            round
                .answers
                .into_iter()
                .zip(&self.nodes)
                .map(|(answer, node)| Inspection {
                    master: node.master.clone(),
                    fence: answer
                        .as_ref()
                        .and_then(|a| a.as_ref().ok())
                        .and_then(fence_of),
                    state: master_state(answer),
                })
                .collect()
        })
    }

    /// Runs `cmd` on every master at once (diagnostics, not locking): each answer with its
    /// round-trip time, waiting at most `timeout` for each.
    pub fn query_each(
        &self,
        cmd: &redis::Cmd,
        timeout: Duration,
    ) -> Vec<(Master, Result<Value, NodeError>, Duration)> {
        self.runtime.block_on(async {
            let queries = self.nodes.iter().map(|node| async move {
                let start = Instant::now();
                let answer = tokio::time::timeout(timeout, node.command(cmd.clone()))
                    .await
                    .unwrap_or_else(|_| Err(node.timed_out()));
                (node.master.clone(), answer, start.elapsed())
            });
            futures_util::future::join_all(queries).await
        })
    }

    /// Sends one request to every master at once and collects answers until `until` is met or
    /// `deadline` passes.
    pub(super) async fn round<'a, F, Fut>(
        &'a self,
        deadline: Instant,
        until: Until,
        vote: fn(&Result<Value, NodeError>) -> Vote,
        request: F,
    ) -> Round
    where
        F: Fn(&'a Node) -> Fut,
        Fut: Future<Output = Result<Value, NodeError>> + 'a,
    {
        let n = self.nodes.len();
        let mut tally = Tally::new(n);
        let mut answers: Vec<Option<Result<Value, NodeError>>> = vec![None; n];
        let mut in_flight: FuturesUnordered<_> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| {
                let request = request(node);
                async move { (i, request.await) }
            })
            .collect();
        let mut expired = pin!(tokio::time::sleep_until(deadline.into()));
        // Writes normally land within microseconds of queueing; if not yet, look again shortly.
        let mut recheck: Option<Pin<Box<tokio::time::Sleep>>> = None;
        std::future::poll_fn(|cx| {
            loop {
                match in_flight.poll_next_unpin(cx) {
                    Poll::Ready(Some((i, answer))) => {
                        tally.record(vote(&answer));
                        answers[i] = Some(answer);
                    }
                    Poll::Ready(None) => return Poll::Ready(()),
                    Poll::Pending => {
                        // Every request still in flight has now been polled, so each one is
                        // queued on its connection (or still connecting, and then nothing was
                        // sent to that master).
                        if until == Until::DecidedAndSent && tally.decision() != Decision::Undecided
                        {
                            if self.nodes.iter().all(|node| node.is_flushed(STALL)) {
                                return Poll::Ready(());
                            }
                            let tick = recheck.get_or_insert_with(|| {
                                Box::pin(tokio::time::sleep(Duration::from_micros(200)))
                            });
                            if tick.as_mut().poll(cx).is_ready() {
                                recheck = None;
                                cx.waker().wake_by_ref();
                            }
                        }
                        return match expired.as_mut().poll(cx) {
                            Poll::Ready(()) => {
                                tally.expire();
                                for (answer, node) in answers.iter_mut().zip(&self.nodes) {
                                    if answer.is_none() {
                                        *answer = Some(Err(node.timed_out()));
                                    }
                                }
                                Poll::Ready(())
                            }
                            Poll::Pending => Poll::Pending,
                        };
                    }
                }
                if until.reached(&tally) {
                    return Poll::Ready(());
                }
            }
        })
        .await;
        Round { tally, answers }
    }

    pub(super) fn trace(&self, what: &str, key: &str, round: &Round, elapsed: Duration) {
        if !crate::log::enabled(2) {
            return;
        }
        for (answer, node) in round.answers.iter().zip(&self.nodes) {
            let said = match answer {
                None => "no answer".to_string(),
                Some(Ok(value)) => format!("{value:?}"),
                Some(Err(e)) => e.to_string(),
            };
            debug!("{what} {key:?}: {} -> {said}", node.master);
        }
        debug!(
            "{what} {key:?}: {:?} after {elapsed:.1?} ({} yes, {} no, {} failed, {} not waited for)",
            round.tally.decision(),
            round.tally.yes(),
            round.tally.no(),
            round.tally.failed(),
            round.tally.pending()
        );
    }
}

/// How long a master may take no bytes at all before a round stops waiting to get a release
/// onto its wire: far longer than a healthy socket ever refuses writes, short next to a node
/// timeout.
const STALL: Duration = Duration::from_millis(10);

/// A fresh random token: a UUIDv4 (122 random bits from the OS generator), as 32 hex digits.
fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Backoff between attempts: exponential from 10 ms to 250 ms, each delay drawn uniformly from
/// its upper half so that contenders that failed together do not retry together.
fn retry_delay(attempt: u32) -> Duration {
    let ceiling_ms = 10u64.saturating_mul(1 << attempt.min(5)).min(250);
    Duration::from_millis(fastrand::u64(ceiling_ms / 2..=ceiling_ms))
}

fn acquire_vote(answer: &Result<Value, NodeError>) -> Vote {
    match answer {
        Ok(Value::Int(1)) => Vote::Yes,
        Ok(Value::Array(_)) | Ok(Value::Int(0)) => Vote::No,
        Ok(_) | Err(_) => Vote::Error,
    }
}

pub(super) fn binary_vote(answer: &Result<Value, NodeError>) -> Vote {
    match answer {
        Ok(Value::Int(1)) => Vote::Yes,
        Ok(Value::Int(0)) => Vote::No,
        Ok(_) | Err(_) => Vote::Error,
    }
}

/// The holder named by the masters that refused (its record, where it belongs to the token now
/// in the lock), and the longest remaining TTL among them.
fn held_by(round: &Round) -> AttemptFailure {
    let mut holder = None;
    let mut expires_in = None;
    for answer in round.answers.iter().flatten() {
        if let Ok(Value::Array(fields)) = answer {
            if holder.is_none()
                && let (Some(record), Some(token)) =
                    (fields.first().and_then(bulk), fields.get(2).and_then(bulk))
            {
                holder = Holder::from_record(record, token);
            }
            if let Some(Value::Int(ms)) = fields.get(1)
                && *ms >= 0
            {
                let ttl = Duration::from_millis(*ms as u64);
                expires_in = Some(expires_in.map_or(ttl, |t: Duration| t.max(ttl)));
            }
        }
    }
    AttemptFailure::Held { holder, expires_in }
}

fn bulk(value: &Value) -> Option<&[u8]> {
    match value {
        Value::BulkString(bytes) => Some(bytes),
        _ => None,
    }
}

/// The fencing counter in an INSPECT reply: `None` where no grant was ever made (or the key
/// holds something that is not a counter).
fn fence_of(reply: &Value) -> Option<u64> {
    match reply {
        Value::Array(fields) => match fields.get(3)? {
            Value::Nil => None,
            value => super::fence::counter(value),
        },
        _ => None,
    }
}

fn master_state(answer: Option<Result<Value, NodeError>>) -> MasterState {
    let fields = match answer {
        None => return MasterState::Unreachable(NodeError::Timeout),
        Some(Err(e)) => return MasterState::Unreachable(e),
        Some(Ok(Value::Array(fields))) => fields,
        Some(Ok(other)) => {
            return MasterState::Unreachable(NodeError::Io(format!("unexpected reply {other:?}")));
        }
    };
    let Some(token) = fields.first().and_then(bulk) else {
        return MasterState::Free;
    };
    let ttl = match fields.get(1) {
        Some(Value::Int(ms)) if *ms >= 0 => Some(Duration::from_millis(*ms as u64)),
        _ => None,
    };
    MasterState::Held {
        token: String::from_utf8_lossy(token).into_owned(),
        ttl,
        holder: fields
            .get(2)
            .and_then(bulk)
            .and_then(|record| Holder::from_record(record, token)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_node_timeout_is_a_small_share_of_the_ttl() {
        let t = Timing::default_node_timeout;
        assert_eq!(t(Duration::from_secs(30)), Duration::from_secs(1));
        assert_eq!(t(Duration::from_secs(10)), Duration::from_millis(500));
        assert_eq!(t(Duration::from_secs(1)), Duration::from_millis(50));
        assert_eq!(t(Duration::from_millis(100)), Duration::from_millis(10));
    }

    #[test]
    fn drift_is_one_percent_plus_two_ms_by_default() {
        let timing = Timing::new(Duration::from_secs(10));
        assert_eq!(timing.drift(), Duration::from_millis(102));
    }

    #[test]
    fn retry_delays_grow_and_stay_bounded() {
        for attempt in 0..40 {
            let d = retry_delay(attempt);
            assert!(d >= Duration::from_millis(5), "{d:?}");
            assert!(d <= Duration::from_millis(250), "{d:?}");
        }
        assert!(retry_delay(0) <= Duration::from_millis(10));
    }

    #[test]
    fn tokens_are_unique_and_unguessable_length() {
        let a = new_token();
        assert_eq!(a.len(), 32);
        assert_ne!(a, new_token());
    }

    #[test]
    fn votes_map_script_answers() {
        assert_eq!(acquire_vote(&Ok(Value::Int(1))), Vote::Yes);
        assert_eq!(acquire_vote(&Ok(Value::Array(vec![]))), Vote::No);
        assert_eq!(acquire_vote(&Err(NodeError::Timeout)), Vote::Error);
        assert_eq!(binary_vote(&Ok(Value::Int(0))), Vote::No);
        assert_eq!(binary_vote(&Ok(Value::Okay)), Vote::Error);
    }
}
