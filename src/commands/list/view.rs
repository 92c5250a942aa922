//! Which keys `list` shows: those whose state (judged once, as `status` judges it: see
//! `lock::KeyState`) is worth a line. Pure functions of a key as read.

use crate::lock::{FoundLock, KeyState, MasterScan, SemaphoreState, Verdict};

/// `lock`'s state, if it is worth listing: a lock held, split or unknown; a semaphore with a
/// slot taken (or revoked, split, unknown); either with waiters.
pub fn listed(lock: &FoundLock, scanned: &[MasterScan]) -> Option<KeyState> {
    let state = lock.read(scanned).state();
    let in_use = match &state.semaphore {
        Some(semaphore) => semaphore.verdict.state != SemaphoreState::Free,
        None => state.verdict != Verdict::Free,
    };
    (in_use || !state.line.is_empty()).then_some(state)
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
        let held = listed(&held, &masters()).expect("listed");
        assert!(matches!(held.verdict, Verdict::Held { masters: 2, .. }));
        assert_eq!(held.holding, [0, 2]);
        assert!(listed(&free, &masters()).is_none());
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
        let state = listed(&lock, &masters()).expect("listed");
        assert_eq!(state.verdict, Verdict::Free);
        assert_eq!(state.waiting, 3);
        let order: Vec<(&str, usize)> = state
            .line
            .iter()
            .map(|w| (w.token.as_str(), w.masters))
            .collect();
        assert_eq!(order, [("w1", 2), ("w2", 1)]);
    }
}
