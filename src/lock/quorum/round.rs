//! The round: one request to every master at once, a decision at quorum.
//!
//! Every operation (acquire, extend, release, a read of a key, fencing) is a round: the same
//! request sent to all N masters concurrently, each under one deadline (connecting included),
//! with the [`Tally`] deciding as soon as the outcome is certain. The round's futures are polled
//! here, in the caller's task, and dropped when the round stops; see `Node::eval` for why that
//! keeps the order of requests on each master.

use std::future::Future;
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};

use super::outcome::MasterFailure;
use super::tally::{Decision, Loss, Tally, Vote, majority};
use crate::lock::scripts::calls::{Args, Script};
use crate::lock::scripts::revoke::acknowledged_reply;
use crate::lock::wire::endpoint::Endpoint;
use crate::lock::wire::master::Master;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// When a round may stop waiting for answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::lock) enum Until {
    /// As soon as the quorum decision is known.
    Decided,
    /// Once decided and every request is on the wire (see `pipe`): a release must reach
    /// even the masters whose answers are not waited for, also when redlock exits right after.
    /// A master still being connected to has no request queued and counts as done: no
    /// acquire can be pending there on this connection, so there is nothing to overtake.
    DecidedAndSent,
    /// A release: as `DecidedAndSent`, and, once a master acknowledged a revocation of the
    /// token (`release --force`, see `scripts::revoke`), until the answers tell whether the
    /// force had taken the hold away ([`Round::taken`]). A revoked `run` whose command ended
    /// before its next renewal learns it here; a release nobody revoked stops as early as
    /// before.
    Released,
    /// Once every request is on the wire, decided or not: the clean-up after a signal (see
    /// `undo`), whose answers change nothing the caller does. What is on the wire reaches a
    /// live master even if redlock exits now, behind the request it undoes on the same
    /// connection; a master still being connected to counts as done, as for `DecidedAndSent`.
    Sent,
    /// Once won, or refused by a majority, or every master answered (or the deadline passed):
    /// a lost extension must tell a lock that is gone from one that is only out of reach, and
    /// an early loss (one refusal, one dead master) says neither.
    Conclusive,
    /// Every master answered (or the deadline passed).
    AllAnswered,
    /// Once won, or every master answered (or the deadline passed): a waiter's turn that fails
    /// must know whether a master it did not hear from gave it the lock (see `queue`); a
    /// newcomer that will wait hears every refusal, so that one from every master needs no
    /// undo (see `kinds::newcomer`).
    WonOrAllAnswered,
    /// Once won, or refused by this many masters, or every master answered (or the deadline
    /// passed): a slot newcomer that will wait needs the tickets of more refusals than decide
    /// its loss (see `semaphore`).
    WonOrRefusedBy(usize),
}

impl Until {
    /// Whether a round may stop listening, with every request already queued.
    fn reached(self, tally: &Tally) -> bool {
        match self {
            Until::Decided => tally.decision() != Decision::Undecided,
            Until::Conclusive => tally.decision() == Decision::Won || tally.refused_by_majority(),
            Until::WonOrAllAnswered => tally.decision() == Decision::Won,
            Until::WonOrRefusedBy(refusals) => {
                tally.decision() == Decision::Won || tally.no() >= refusals
            }
            // Written out: checked where the writes can be seen.
            Until::DecidedAndSent | Until::Released | Until::Sent | Until::AllAnswered => false,
        }
    }
}

/// The answers of one round, by master index: `Some(Err(Timeout))` where the deadline passed,
/// `None` where the round decided without waiting for that master.
pub(in crate::lock) struct Round {
    pub(in crate::lock) tally: Tally,
    pub(in crate::lock) answers: Vec<Option<Result<Reply, NodeError>>>,
}

impl Round {
    /// The masters (by index) whose answer `vote` counts as a yes.
    pub(in crate::lock) fn granted_by(
        &self,
        vote: impl Fn(&Result<Reply, NodeError>) -> Vote,
    ) -> Vec<usize> {
        self.answers
            .iter()
            .enumerate()
            .filter(|(_, answer)| answer.as_ref().is_some_and(|a| vote(a) == Vote::Yes))
            .map(|(i, _)| i)
            .collect()
    }

    /// For a release round (see [`Until::Released`]): whether a force had taken the hold away
    /// before it, as far as the answers tell.
    pub(in crate::lock) fn taken(&self) -> bool {
        taken(&self.tally, &self.answers) == Some(true)
    }

    pub(in crate::lock) fn failures(&self, masters: &Masters) -> Vec<MasterFailure> {
        self.answers
            .iter()
            .zip(&masters.nodes)
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

/// Whether a force had taken a release's hold away, from the answers so far: where masters
/// acknowledged a revocation of the token, yes once fewer than the quorum can still have had it
/// to delete (a renewal would have been refused as revoked: `kinds::renewal`), no once a quorum
/// deleted it; `None` until the answers tell. A hold nobody acknowledged was not taken.
fn taken(tally: &Tally, answers: &[Option<Result<Reply, NodeError>>]) -> Option<bool> {
    let acknowledged = answers
        .iter()
        .flatten()
        .filter(|answer| {
            answer
                .as_ref()
                .is_ok_and(|reply| acknowledged_reply(reply).is_some())
        })
        .count();
    let deleted = tally.yes() - acknowledged;
    if acknowledged == 0 || deleted >= tally.quorum() {
        Some(false)
    } else if deleted + tally.pending() < tally.quorum() {
        Some(true)
    } else {
        None
    }
}

/// What a won round says about the masters the lock does without (see the lock's `late`):
/// those that refused for a configuration reason before it decided, and those whose answer it
/// did not wait for, whose refusal may still be on its way.
#[derive(Clone, Debug, Default)]
pub(in crate::lock) struct Refusals {
    pub(in crate::lock) heard: Vec<MasterFailure>,
    /// By master index.
    pub(in crate::lock) unanswered: Vec<usize>,
    /// How long the round took to decide: about how much later than the others a live master
    /// that had the request may answer.
    pub(in crate::lock) decided_after: Duration,
}

impl Refusals {
    pub(in crate::lock) fn of(
        round: &Round,
        masters: &Masters,
        decided_after: Duration,
    ) -> Refusals {
        let mut heard = round.failures(masters);
        heard.retain(|f| f.cause().is_configuration());
        let unanswered = (round.answers.iter().enumerate())
            .filter_map(|(i, answer)| answer.is_none().then_some(i))
            .collect();
        Refusals {
            heard,
            unanswered,
            decided_after,
        }
    }
}

/// The masters, one kept connection each (one per node of a cluster), that rounds fan out to.
pub(in crate::lock) struct Masters {
    pub(in crate::lock) nodes: Vec<Endpoint>,
}

impl Masters {
    pub(in crate::lock) fn quorum(&self) -> usize {
        majority(self.nodes.len())
    }

    /// Sends one request to every master at once and collects answers until `until` is met or
    /// `deadline` passes; decided by a majority.
    pub(in crate::lock) async fn round<'a, F, Fut>(
        &'a self,
        deadline: Instant,
        until: Until,
        vote: fn(&Result<Reply, NodeError>) -> Vote,
        request: F,
    ) -> Round
    where
        F: Fn(&'a Endpoint) -> Fut,
        Fut: Future<Output = Result<Reply, NodeError>> + 'a,
    {
        self.round_with(self.quorum(), deadline, until, vote, request)
            .await
    }

    /// A round decided by `quorum` yes votes instead of a majority (a semaphore's slots).
    pub(in crate::lock) async fn round_with<'a, F, Fut>(
        &'a self,
        quorum: usize,
        deadline: Instant,
        until: Until,
        vote: fn(&Result<Reply, NodeError>) -> Vote,
        request: F,
    ) -> Round
    where
        F: Fn(&'a Endpoint) -> Fut,
        Fut: Future<Output = Result<Reply, NodeError>> + 'a,
    {
        let n = self.nodes.len();
        let mut tally = Tally::with_quorum(n, quorum);
        let mut answers: Vec<Option<Result<Reply, NodeError>>> = vec![None; n];
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
        let mut decided = false;
        std::future::poll_fn(|cx| {
            loop {
                match in_flight.poll_next_unpin(cx) {
                    Poll::Ready(Some((i, answer))) => {
                        tally.record(vote(&answer));
                        answers[i] = Some(answer);
                    }
                    Poll::Ready(None) => return Poll::Ready(()),
                    Poll::Pending if decided => return Poll::Ready(()),
                    Poll::Pending => {
                        // Every request still in flight has now been polled, so each one is
                        // queued on its connection (or still connecting, and then nothing was
                        // sent to that master).
                        let wants_sent = match until {
                            Until::DecidedAndSent => tally.decision() != Decision::Undecided,
                            Until::Released => match tally.decision() {
                                Decision::Undecided => false,
                                Decision::Won => taken(&tally, &answers).is_some(),
                                Decision::Lost(_) => true,
                            },
                            Until::Sent => true,
                            _ => false,
                        };
                        if wants_sent {
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
                // Decided: the answers that are already in still count (a master that refused
                // for a configuration reason is worth a warning), but nothing more is waited
                // for; the next poll that finds nothing ready ends the round.
                decided = decided || until.reached(&tally);
            }
        })
        .await;
        Round { tally, answers }
    }

    /// Runs the read-only `script` with `args` (over `layout`, `keys::Names::keys`) on every
    /// master and waits for all of them, up to `node_timeout` (READ, for `status` and its kin:
    /// see `read::key`): each master with its answer, or `Timeout` where none came.
    pub(in crate::lock) async fn read_everywhere<A: Args>(
        &self,
        what: &str,
        key: &str,
        script: &Script<A>,
        layout: &[&str],
        args: &A,
        node_timeout: Duration,
    ) -> Vec<(&Master, Result<Reply, NodeError>)> {
        let start = Instant::now();
        let round = self
            .round(
                start + node_timeout,
                Until::AllAnswered,
                |_| Vote::Yes,
                |node| script.run(node, layout, args),
            )
            .await;
        self.trace(what, key, &round, start.elapsed());
        round
            .answers
            .into_iter()
            .zip(&self.nodes)
            .map(|(answer, node)| (&node.master, answer.unwrap_or(Err(NodeError::Timeout))))
            .collect()
    }

    pub(in crate::lock) fn trace(&self, what: &str, key: &str, round: &Round, elapsed: Duration) {
        if !log::log_enabled!(log::Level::Debug) {
            return;
        }
        for (answer, node) in round.answers.iter().zip(&self.nodes) {
            let said = match answer {
                None => "no answer".to_string(),
                Some(Ok(value)) => value.to_string(),
                Some(Err(e)) => e.to_string(),
            };
            log::debug!(
                event = "answer", op = what, key = key, master:% = node.master, answer:% = said;
                "{what} {key:?}: {} -> {said}", node.master
            );
        }
        let (outcome, said) = match round.tally.decision() {
            Decision::Won => ("won", "won"),
            Decision::Lost(Loss::Refused) => ("refused", "lost: refused"),
            Decision::Lost(Loss::Unreachable) => (
                "unreachable",
                "lost: too many masters failed or did not answer",
            ),
            Decision::Undecided => ("undecided", "undecided"),
        };
        log::debug!(
            event = "round", op = what, key = key, outcome = outcome,
            elapsed_ms = elapsed.as_micros() as f64 / 1000.0, yes = round.tally.yes(),
            no = round.tally.no(), failed = round.tally.failed(), pending = round.tally.pending();
            "{what} {key:?}: {said} after {elapsed:.1?} ({} yes, {} no, {} failed, {} not waited for)",
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A round over `n` masters won by `quorum`, with these answers so far: `a` an
    /// acknowledgement, `d` a deletion, `-` none yet.
    fn release(
        n: usize,
        quorum: usize,
        answers: &str,
    ) -> (Tally, Vec<Option<Result<Reply, NodeError>>>) {
        let mut tally = Tally::with_quorum(n, quorum);
        let answers: Vec<_> = answers
            .chars()
            .map(|answer| match answer {
                'a' => Some(Ok(Reply::Array(vec![
                    Reply::Bulk(b"acknowledged".to_vec()),
                    Reply::Nil,
                ]))),
                'd' => Some(Ok(Reply::Int(1))),
                _ => None,
            })
            .collect();
        assert_eq!(answers.len(), n);
        for _ in answers.iter().flatten() {
            tally.record(Vote::Yes);
        }
        (tally, answers)
    }

    #[test]
    fn a_release_tells_a_taken_hold_by_a_renewals_rule() {
        let taken = |n, quorum, answers| {
            let (tally, answers) = release(n, quorum, answers);
            taken(&tally, &answers)
        };
        // Nobody acknowledged, or a quorum deleted: not taken, whatever else comes.
        assert_eq!(taken(3, 2, "dd-"), Some(false));
        assert_eq!(taken(3, 2, "add"), Some(false));
        // Decided on one of each: the third tells (a deletion keeps it, an acknowledgement
        // takes it), so the round listens on.
        assert_eq!(taken(3, 2, "ad-"), None);
        assert_eq!(taken(3, 2, "ada"), Some(true));
        assert_eq!(taken(3, 2, "aa-"), Some(true));
        // A slot of --limit 2 on 3 masters needs all 3: one acknowledgement takes it.
        assert_eq!(taken(3, 3, "add"), Some(true));
    }
}
