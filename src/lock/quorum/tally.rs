//! The quorum decision: a pure function of the answers received so far.
//!
//! Every Redlock operation (acquire, extend, release) sends one request to each of N masters and
//! must decide as soon as the outcome is known, in either direction:
//!
//! 1. won, once a majority (N/2 + 1) said yes;
//! 2. lost, once the yes votes plus the masters still pending can no longer reach a majority.
//!
//! Rule 2 is what keeps an even N from hanging: with N = 4 and two refusals, two yes votes can
//! never make three, so the attempt is lost at once instead of waiting for the stragglers (a bug
//! several Redlock libraries had). When the per-node deadline passes, every master still pending
//! counts as timed out, so a decision always exists once nothing is pending.
//!
//! The quorum is the majority for a lock; a semaphore slot needs more (see `semaphore`), and
//! [`Tally::with_quorum`] takes any quorum from 1 to N. Both rules read the same with "quorum"
//! for "majority".

pub use crate::lock::scripts::replies::Vote;

/// Why a majority could not be reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// Enough masters answered, but too many refused: the key is held by someone else (or, for
    /// an extension, no longer ours).
    Refused,
    /// Too many masters failed or timed out for any majority to answer at all.
    Unreachable,
}

/// The state of one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Neither outcome is certain yet: keep waiting for answers.
    Undecided,
    /// A majority said yes.
    Won,
    /// A majority can no longer say yes.
    Lost(Loss),
}

/// The number of masters a holder of one of `limit` slots needs among `nodes`:
/// floor(L·N/(L+1)) + 1 (see `kinds::semaphore` for why); the majority for L = 1.
pub fn slot_quorum(nodes: usize, limit: u32) -> usize {
    let limit = limit.max(1) as usize;
    limit * nodes / (limit + 1) + 1
}

/// The majority of `nodes` masters.
pub fn majority(nodes: usize) -> usize {
    nodes / 2 + 1
}

/// The votes of one round over `nodes` masters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    nodes: usize,
    /// How many yes votes win: the majority, unless `with_quorum` said otherwise.
    quorum: usize,
    yes: usize,
    no: usize,
    error: usize,
    timeout: usize,
}

impl Tally {
    /// A round over `nodes` masters with no answer yet, won by a majority.
    // Rounds build theirs with the quorum they need (`Masters::round_with`).
    #[allow(dead_code)]
    pub fn new(nodes: usize) -> Self {
        assert!(nodes > 0, "a round needs at least one master");
        Tally::with_quorum(nodes, majority(nodes))
    }

    /// A round over `nodes` masters with no answer yet, won by `quorum` yes votes.
    pub fn with_quorum(nodes: usize, quorum: usize) -> Self {
        assert!(nodes > 0, "a round needs at least one master");
        assert!(
            (1..=nodes).contains(&quorum),
            "a quorum of {quorum} over {nodes} masters"
        );
        Tally {
            nodes,
            quorum,
            yes: 0,
            no: 0,
            error: 0,
            timeout: 0,
        }
    }

    /// Counts one master's answer.
    pub fn record(&mut self, vote: Vote) {
        assert!(self.pending() > 0, "more votes than masters");
        match vote {
            Vote::Yes => self.yes += 1,
            Vote::No => self.no += 1,
            Vote::Error => self.error += 1,
        }
    }

    /// The deadline passed: every master still pending counts as timed out.
    pub fn expire(&mut self) {
        self.timeout += self.pending();
    }

    /// Masters that have not answered yet.
    pub fn pending(&self) -> usize {
        self.nodes - self.yes - self.no - self.error - self.timeout
    }

    pub fn yes(&self) -> usize {
        self.yes
    }

    pub fn no(&self) -> usize {
        self.no
    }

    /// How many yes votes win.
    pub fn quorum(&self) -> usize {
        self.quorum
    }

    /// Masters that failed or timed out.
    pub fn failed(&self) -> usize {
        self.error + self.timeout
    }

    /// True once so many masters refused that no quorum (a majority, for a lock) can hold the
    /// key for us, whatever the others say now or later. Used by renewal to tell a lock that
    /// is gone from one that is only unreachable for the moment.
    pub fn refused_by_majority(&self) -> bool {
        self.nodes - self.no < self.quorum
    }

    /// The decision the votes so far allow.
    pub fn decision(&self) -> Decision {
        let needed = self.quorum;
        if self.yes >= needed {
            Decision::Won
        } else if self.yes + self.pending() < needed {
            // More failures than a majority can spare means no majority could have answered.
            let loss = if self.failed() > self.nodes - needed {
                Loss::Unreachable
            } else {
                Loss::Refused
            };
            Decision::Lost(loss)
        } else {
            Decision::Undecided
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VOTES: [Vote; 3] = [Vote::Yes, Vote::No, Vote::Error];

    /// Every sequence of `n` answers, in every order, as indices into `VOTES`.
    fn all_sequences(n: usize) -> impl Iterator<Item = Vec<Vote>> {
        (0..3usize.pow(n as u32)).map(move |mut code| {
            (0..n)
                .map(|_| {
                    let vote = VOTES[code % 3];
                    code /= 3;
                    vote
                })
                .collect()
        })
    }

    #[test]
    fn majority_is_more_than_half() {
        for (n, m) in [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (7, 4)] {
            assert_eq!(majority(n), m, "N = {n}");
        }
    }

    /// For N = 1 to 7, every quorum from 1 to N (the majority is `Tally::new`'s; a semaphore
    /// uses larger ones), and every order of yes / no / error answers (a timeout is an error):
    /// the decision is taken exactly when the outcome becomes certain, won never turns into
    /// lost or back, a decision always exists once every master answered, a loss is called
    /// unreachable exactly when the failures seen so far leave no possible quorum of answers,
    /// and `refused_by_majority` says exactly that the refusals alone leave no quorum.
    #[test]
    fn every_answer_sequence_decides_exactly_when_the_outcome_is_certain() {
        for n in 1..=7 {
            for needed in 1..=n {
                every_sequence_decides_at(n, needed);
            }
            assert_eq!(Tally::new(n), Tally::with_quorum(n, majority(n)));
        }
    }

    fn every_sequence_decides_at(n: usize, needed: usize) {
        for sequence in all_sequences(n) {
            let mut tally = Tally::with_quorum(n, needed);
            let mut first: Option<Decision> = None;
            for answered in 0..n {
                tally.record(sequence[answered]);
                let seen = &sequence[..=answered];
                let yes = seen.iter().filter(|v| **v == Vote::Yes).count();
                let failed = seen.iter().filter(|v| matches!(v, Vote::Error)).count();
                let won_for_sure = yes >= needed;
                let lost_for_sure = yes + (n - seen.len()) < needed;
                let decision = tally.decision();
                let refused = seen.iter().filter(|v| **v == Vote::No).count();
                assert_eq!(
                    tally.refused_by_majority(),
                    n - refused < needed,
                    "{sequence:?} quorum {needed}"
                );
                match decision {
                    Decision::Won => assert!(won_for_sure, "{sequence:?}"),
                    Decision::Lost(loss) => {
                        assert!(lost_for_sure, "{sequence:?}");
                        let unreachable = failed > n - needed;
                        assert_eq!(loss == Loss::Unreachable, unreachable, "{sequence:?}");
                    }
                    Decision::Undecided => {
                        assert!(!won_for_sure && !lost_for_sure, "{sequence:?}")
                    }
                }
                match (first, decision) {
                    (None, Decision::Undecided) => {}
                    (None, decided) => first = Some(decided),
                    (Some(Decision::Won), later) => assert_eq!(later, Decision::Won),
                    (Some(_), later) => {
                        assert!(matches!(later, Decision::Lost(_)), "{sequence:?}")
                    }
                }
            }
            assert_eq!(tally.pending(), 0);
            assert_ne!(tally.decision(), Decision::Undecided, "{sequence:?}");
        }
    }

    #[test]
    fn deadline_turns_pending_masters_into_timeouts_and_always_decides() {
        for n in 1..=7 {
            for quorum in 1..=n {
                for yes in 0..=n {
                    let mut tally = Tally::with_quorum(n, quorum);
                    (0..yes).for_each(|_| tally.record(Vote::Yes));
                    tally.expire();
                    assert_eq!(tally.pending(), 0);
                    let expected = if yes >= quorum {
                        Decision::Won
                    } else {
                        Decision::Lost(Loss::Unreachable)
                    };
                    assert_eq!(
                        tally.decision(),
                        expected,
                        "N = {n}, q = {quorum}, yes = {yes}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_larger_quorum_needs_more_yes_votes_and_loses_sooner() {
        // N = 5, quorum 4 (a semaphore of 2): three yes votes are not enough, two refusals lose.
        let mut tally = Tally::with_quorum(5, 4);
        (0..3).for_each(|_| tally.record(Vote::Yes));
        assert_eq!(tally.decision(), Decision::Undecided);
        tally.record(Vote::No);
        assert_eq!(tally.decision(), Decision::Undecided);
        tally.record(Vote::No);
        assert_eq!(tally.decision(), Decision::Lost(Loss::Refused));
        assert!(tally.refused_by_majority());
        let mut tally = Tally::with_quorum(5, 4);
        tally.record(Vote::Error);
        tally.record(Vote::Error);
        assert_eq!(tally.decision(), Decision::Lost(Loss::Unreachable));
    }

    #[test]
    #[should_panic(expected = "a quorum of 0 over 3 masters")]
    fn a_quorum_of_zero_is_refused() {
        Tally::with_quorum(3, 0);
    }

    #[test]
    fn even_n_loses_as_soon_as_half_refuse() {
        let mut tally = Tally::new(4);
        tally.record(Vote::No);
        assert_eq!(tally.decision(), Decision::Undecided);
        tally.record(Vote::No);
        assert_eq!(tally.decision(), Decision::Lost(Loss::Refused));
    }

    #[test]
    fn a_minority_down_still_wins_without_waiting_for_it() {
        let mut tally = Tally::new(5);
        tally.record(Vote::Error);
        tally.record(Vote::Error);
        tally.record(Vote::Yes);
        tally.record(Vote::Yes);
        assert_eq!(tally.decision(), Decision::Undecided);
        tally.record(Vote::Yes);
        assert_eq!(tally.decision(), Decision::Won);
    }

    #[test]
    fn a_majority_down_is_unreachable_not_refused() {
        let mut tally = Tally::new(5);
        tally.record(Vote::Error);
        tally.record(Vote::Yes);
        tally.record(Vote::Error);
        assert_eq!(tally.decision(), Decision::Undecided);
        tally.record(Vote::Error);
        assert_eq!(tally.decision(), Decision::Lost(Loss::Unreachable));
    }

    #[test]
    fn refused_by_majority_means_the_key_is_gone_for_good() {
        let mut tally = Tally::new(5);
        tally.record(Vote::No);
        tally.record(Vote::No);
        tally.record(Vote::Error);
        assert!(!tally.refused_by_majority());
        tally.record(Vote::No);
        assert!(tally.refused_by_majority());
    }
}
