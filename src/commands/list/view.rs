//! What `list` shows of each lock found: the verdict and the queue, judged from what each
//! master has exactly as `status` judges them (`lock::judge`, `lock::line`), and the masters
//! that hold it. Pure functions of a lock as read.

use crate::lock::{
    FoundLock, HistoryTurn, InLine, MasterScan, MasterState, Reader, Revocation, SHARED_MARKER,
    SemaphoreState, SemaphoreVerdict, SlotsInspection, Verdict, count_readers, judge,
    judge_readers, judge_slots, line,
};

/// One lock, as listed.
#[derive(Clone, Debug, PartialEq)]
pub struct LockView {
    pub key: String,
    pub verdict: Verdict,
    /// Each master's state of the lock key, by master index.
    pub states: Vec<MasterState>,
    /// The masters that hold the verdict's token (held) or any token (otherwise).
    pub holding: Vec<usize>,
    /// The longest queue any master has (lapsed places included).
    pub waiting: usize,
    /// The live waiters, in the order they are served.
    pub queue: Vec<InLine>,
    /// Held by readers (`--shared`): those that hold a share on a majority (judged as
    /// `status` judges them, from the first shares each master lists).
    pub readers: Option<Vec<Reader>>,
    /// How many readers hold it, as the masters count them (`lock::count_readers`): more than
    /// `readers` lists where a master has more live shares than `list` reads.
    pub reader_count: usize,
    /// The highest order that took the lock (`--order`), on any master that answered.
    pub order: Option<u64>,
    /// The line's policy (`--supersede`), on any master that answered.
    pub policy: Option<String>,
    /// Revoked by `release --force`: the record some master shows.
    pub revocation: Option<Revocation>,
    /// The key's last turn whose end a master recorded (`redlock history`'s newest).
    pub last_turn: Option<HistoryTurn>,
}

/// A key used as a semaphore (`--limit`), as listed: judged as `status` judges one
/// (`lock::judge_slots`), from the first slots each master lists.
#[derive(Clone, Debug)]
pub struct SemaphoreView {
    pub key: String,
    pub verdict: SemaphoreVerdict,
    /// Each master's slots, by master index.
    pub masters: Vec<SlotsInspection>,
    /// The live waiters, in the order they are served.
    pub queue: Vec<InLine>,
}

impl SemaphoreView {
    /// Worth listing: some slot taken (or revoked, or split, or unknown), or waiters.
    pub fn listed(&self) -> bool {
        self.verdict.state != SemaphoreState::Free || !self.queue.is_empty()
    }
}

/// The key as a semaphore, where it is one: as `status` decides, a key not held as a lock
/// whose masters show a semaphore's limit.
pub fn semaphore(lock: &FoundLock, scanned: &[MasterScan]) -> Option<SemaphoreView> {
    let inspections = lock.inspections(scanned);
    let states: Vec<MasterState> = inspections.iter().map(|m| m.state.clone()).collect();
    if matches!(judge(&states), Verdict::Held { .. }) {
        return None;
    }
    let masters = lock.slots_inspections(scanned);
    let slots: Vec<_> = masters.iter().map(|m| m.state.clone()).collect();
    Some(SemaphoreView {
        key: lock.key.clone(),
        verdict: judge_slots(&slots)?,
        masters,
        queue: line(&inspections),
    })
}

/// The lock as listed, if it is worth listing: held, split or unknown, or with waiters.
pub fn view(lock: &FoundLock, scanned: &[MasterScan]) -> Option<LockView> {
    let masters = lock.inspections(scanned);
    let states: Vec<MasterState> = masters.iter().map(|m| m.state.clone()).collect();
    let verdict = judge(&states);
    let holding: Vec<usize> = states
        .iter()
        .enumerate()
        .filter(|(_, state)| match (state, &verdict) {
            (MasterState::Held { token, .. }, Verdict::Held { token: held, .. }) => token == held,
            (MasterState::Held { .. }, _) => true,
            _ => false,
        })
        .map(|(i, _)| i)
        .collect();
    let shared = matches!(&verdict, Verdict::Held { token, .. } if token == SHARED_MARKER);
    let readers = shared.then(|| {
        let inspections = lock.readers_inspections(scanned);
        let readers = judge_readers(&inspections);
        let count = count_readers(&inspections, readers.len());
        (readers, count)
    });
    let (readers, reader_count) = match readers {
        Some((readers, count)) => (Some(readers), count),
        None => (None, 0),
    };
    let revocation = super::super::status_revoked::found(&masters, &verdict).cloned();
    let quorum = scanned.len() / 2 + 1;
    let view = LockView {
        last_turn: lock.read(scanned).last_turn(quorum),
        revocation,
        readers,
        reader_count,
        key: lock.key.clone(),
        verdict,
        holding,
        waiting: masters.iter().map(|m| m.waiting).max().unwrap_or(0),
        order: masters.iter().filter_map(|m| m.order).max(),
        policy: masters.iter().find_map(|m| m.policy.clone()),
        queue: line(&masters),
        states,
    };
    (view.verdict != Verdict::Free || !view.queue.is_empty()).then_some(view)
}

#[cfg(test)]
pub(super) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::lock::{Holder, LockRead, NodeError, QueueRead, QueuedWaiter, Ttl};

    pub fn read(token: Option<&str>) -> LockRead {
        LockRead {
            now_ms: 1_000_000,
            token: token.map(str::to_string),
            ttl: if token.is_some() {
                Ttl::Left(Duration::from_secs(20))
            } else {
                Ttl::Missing
            },
            holder_record: None,
            holder_ttl: Ttl::Missing,
            fence: None,
            queue: QueueRead::default(),
            readers: Default::default(),
            order: None,
            policy: None,
            slots: None,
            history: Vec::new(),
        }
    }

    fn waiter(token: &str, ticket: u64, live: bool) -> QueuedWaiter {
        QueuedWaiter {
            token: token.into(),
            ticket,
            lapses_in: live.then_some(Duration::from_secs(2)),
            holder: Holder::from_json(
                format!(
                    r#"{{"host":"h","pid":7,"user":"u","command":"job {token}","since_ms":5}}"#
                )
                .as_bytes(),
            ),
        }
    }

    fn masters() -> Vec<MasterScan> {
        (0..3)
            .map(|i| MasterScan {
                master: crate::lock::Master::parse(&format!("redis://h{i}:6379")).unwrap(),
                keys: 1,
                end: crate::lock::ScanEnd::Complete,
            })
            .collect()
    }

    #[test]
    fn held_locks_name_their_masters_and_free_ones_are_left_out() {
        let held = FoundLock {
            key: "k".into(),
            reads: vec![
                Ok(read(Some("a"))),
                Err(NodeError::Timeout),
                Ok(read(Some("a"))),
            ],
        };
        let free = FoundLock {
            key: "f".into(),
            reads: vec![Ok(read(None)), Ok(read(None)), Ok(read(Some("x")))],
        };
        let held = view(&held, &masters()).expect("listed");
        assert!(matches!(held.verdict, Verdict::Held { masters: 2, .. }));
        assert_eq!(held.holding, [0, 2]);
        assert_eq!(view(&free, &masters()), None);
    }

    #[test]
    fn the_queue_is_the_one_status_shows() {
        let mut one = read(None);
        one.queue.len = 2;
        one.queue.waiters = vec![waiter("w1", 7, true), waiter("w2", 8, true)];
        let mut two = read(None);
        two.queue.len = 3;
        two.queue.waiters = vec![waiter("w1", 7, true), waiter("w0", 6, false)];
        let lock = FoundLock {
            key: "k".into(),
            reads: vec![Ok(one), Ok(two), Ok(read(None))],
        };
        // Free, but listed for its waiters; the lapsed place is left out of the line.
        let view = view(&lock, &masters()).expect("listed");
        assert_eq!(view.verdict, Verdict::Free);
        assert_eq!(view.waiting, 3);
        let order: Vec<(&str, usize)> = view
            .queue
            .iter()
            .map(|w| (w.token.as_str(), w.masters))
            .collect();
        assert_eq!(order, [("w1", 2), ("w2", 1)]);
    }
}
