//! One key, read as everything that judges it reads it (`status`, its watch, re-entrance,
//! release): READ (see `scripts::scan`) on every master in one round, waiting for each up to one
//! node timeout, taking nothing. What each judge looks at (the lock with its queue and fencing
//! counter, a semaphore's slots, a lock's readers) is taken from that one read, so that every
//! judge sees one picture of each master, and `status` costs one round whatever the key holds.
//! `list`'s reads (see `scan`) are turned into the same records here, by the same code.

use std::time::Duration;

pub(in crate::lock) mod state;

use crate::lock::quorum::outcome::{Inspection, MasterState};
use crate::lock::quorum::reader_verdict::ReadersInspection;
use crate::lock::quorum::round::Masters;
use crate::lock::quorum::slot_verdict::SlotsInspection;
use crate::lock::read::history::{MasterHistory, Turn, TurnEnd, merge};
use crate::lock::read::scan::{LockRead, Reading, decoded};
use crate::lock::scripts::READ;
use crate::lock::scripts::keys::Names;
use crate::lock::scripts::revoke::revocation_in;
use crate::lock::scripts::shared::Shares;
use crate::lock::scripts::slots::Slots;
use crate::lock::wire::master::Master;
use crate::lock::wire::node::NodeError;

/// One key as every master holds it: READ's answer from each, or why there is none.
#[derive(Clone, Debug)]
pub struct KeyRead {
    pub masters: Vec<(Master, Result<LockRead, NodeError>)>,
}

/// Reads `key` on every master, as `status` reads it ([`Reading::STATUS`]).
pub(in crate::lock) async fn read_key(
    masters: &Masters,
    key: &str,
    node_timeout: Duration,
) -> KeyRead {
    let names = Names::of(key);
    let args = Reading::STATUS.args();
    let answers = masters
        .read_everywhere("read", key, &READ, &names.keys(key), &args, node_timeout)
        .await;
    KeyRead {
        masters: answers
            .into_iter()
            .map(|(master, answer)| (master.clone(), decoded(answer)))
            .collect(),
    }
}

impl KeyRead {
    /// The key's newest turn whose end a master recorded (released, lost, revoked, or a
    /// waiter's that never ran; `None` where none is), from the history's newest events READ
    /// read on each master, merged as `history` merges them (see `read::history`). An
    /// expired turn is not one: only `history` tells it, from the whole record.
    pub fn last_turn(&self, quorum: usize) -> Option<Turn> {
        let masters: Vec<MasterHistory> = self
            .masters
            .iter()
            .filter_map(|(_, read)| read.as_ref().ok())
            .map(|read| MasterHistory {
                events: read.history.clone(),
                current: read.token.clone(),
            })
            .collect();
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        merge(&masters, quorum, now_ms)
            .into_iter()
            .find(|turn| turn.ended_ms.is_some() && turn.end != TurnEnd::Holding)
    }

    /// What each master has of the lock, for the verdict and the line ([`KeyRead::state`]):
    /// its fencing counter where the read took its value (`list`'s does not, see `scan`).
    pub fn inspections(&self) -> Vec<Inspection> {
        self.masters
            .iter()
            .map(|(master, read)| match read {
                Err(error) => Inspection {
                    master: master.clone(),
                    state: MasterState::Unreachable(error.clone()),
                    fence: None,
                    fence_problem: None,
                    queue: Vec::new(),
                    waiting: 0,
                    order: None,
                    policy: None,
                    revocation: None,
                },
                Ok(read) => {
                    let value = read.fence.as_ref().and_then(|fence| fence.value.clone());
                    Inspection {
                        master: master.clone(),
                        state: read.state(),
                        fence: value.clone().and_then(Result::ok),
                        fence_problem: value.and_then(Result::err),
                        queue: read.queue.waiters.clone(),
                        waiting: usize::try_from(read.queue.len).unwrap_or(usize::MAX),
                        order: read.order,
                        policy: read.policy.clone(),
                        revocation: revocation_in(
                            read.token.as_deref().map(str::as_bytes),
                            read.holder_record.as_deref().map(str::as_bytes),
                        ),
                    }
                }
            })
            .collect()
    }

    /// What each master has of the semaphore at this key (`--limit`), for
    /// the semaphore's verdict ([`KeyRead::state`]): the first slots it listed, the queue's length, and whether
    /// the key is also in use as a lock there.
    pub fn slots(&self) -> Vec<SlotsInspection> {
        self.masters
            .iter()
            .map(|(master, read)| SlotsInspection {
                master: master.clone(),
                state: read.clone().and_then(|read| {
                    let slots = read.slots.unwrap_or_default();
                    match slots.refused {
                        Some(error) => Err(NodeError::Server(error)),
                        None => Ok(Slots {
                            limit: slots.limit,
                            is_lock: read.token.is_some(),
                            waiting: usize::try_from(read.queue.len).unwrap_or(usize::MAX),
                            slots: slots.slots,
                        }),
                    }
                }),
            })
            .collect()
    }

    /// What each master has of the key's readers (`--shared`), for
    /// the readers' count ([`KeyRead::state`]): how many live shares, and the first of them.
    pub fn readers(&self) -> Vec<ReadersInspection> {
        self.masters
            .iter()
            .map(|(master, read)| ReadersInspection {
                master: master.clone(),
                state: read.clone().and_then(|read| match read.readers.refused {
                    Some(error) => Err(NodeError::Server(error)),
                    None => Ok(Shares {
                        count: usize::try_from(read.readers.live).unwrap_or(usize::MAX),
                        shares: read.readers.shares,
                    }),
                }),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::read::key::state::Seen;
    use crate::lock::read::scan::{TEXT_COUNTER, empty_lock};
    use crate::lock::scripts::holder::Holder;
    use crate::lock::wire::resp::Reply;

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(text.as_bytes().to_vec())
    }

    fn master() -> Master {
        Master::parse("redis://127.0.0.1:6379").expect("a master")
    }

    /// One master's READ answer, as `status` reads it.
    fn read_of(fields: Vec<Reply>) -> KeyRead {
        KeyRead {
            masters: vec![(master(), decoded(Ok(Reply::Array(fields))))],
        }
    }

    /// The fence part of READ's answer: {PTTL, idle, TYPE, ENCODING, value}.
    fn fence(kind: &str, value: Reply) -> Reply {
        Reply::Array(vec![
            Reply::Int(-1),
            Reply::Int(5),
            Reply::Simple(kind.into()),
            bulk("int"),
            value,
        ])
    }

    #[test]
    fn a_record_is_shown_only_for_the_token_in_the_key() {
        let holder = Holder::this_process(&["job".into()]);
        let held = |record: &str| {
            let mut fields = empty_lock();
            fields[2] = bulk("t2");
            fields[3] = Reply::Int(5_000);
            fields[4] = bulk(record);
            fields[6] = fence("string", bulk("7"));
            read_of(fields).inspections().remove(0)
        };
        let other = held(&holder.record("t1"));
        assert_eq!(other.fence, Some(7));
        assert!(
            matches!(other.state, MasterState::Held { holder: None, .. }),
            "{:?}",
            other.state
        );
        let own = held(&holder.record("t2")).state;
        assert!(
            matches!(
                own,
                MasterState::Held {
                    holder: Some(_),
                    ..
                }
            ),
            "{own:?}"
        );
    }

    #[test]
    fn a_free_lock_a_bad_reply_and_no_answer() {
        let free = read_of(empty_lock()).inspections().remove(0);
        assert_eq!(
            (free.state, free.fence, free.fence_problem, free.waiting),
            (MasterState::Free, None, None, 0)
        );
        let failed = |answer| {
            let read = KeyRead {
                masters: vec![(master(), decoded(answer))],
            };
            let lock = read.inspections().remove(0);
            assert_eq!(lock.fence, None);
            let (slots, readers) = (read.slots().remove(0), read.readers().remove(0));
            assert_eq!(slots.state.as_ref().err(), readers.state.as_ref().err());
            lock.state
        };
        assert_eq!(
            failed(Err(NodeError::Timeout)),
            MasterState::Unreachable(NodeError::Timeout)
        );
        assert_eq!(
            failed(Ok(Reply::Int(1))),
            MasterState::Unreachable(NodeError::BadReply("unexpected reply (integer) 1".into()))
        );
    }

    /// A counter that is not a number is the counter's problem, not the lock's (`status` names
    /// it): GET's error for a key of another type, or text.
    #[test]
    fn a_counter_that_is_not_a_number_is_its_problem() {
        let problem = |part: Reply| {
            let mut fields = empty_lock();
            fields[6] = part;
            let lock = read_of(fields).inspections().remove(0);
            assert_eq!(lock.fence, None);
            lock.fence_problem
        };
        let wrong = "WRONGTYPE Operation against a key holding the wrong kind of value";
        assert_eq!(
            problem(fence("hash", Reply::Error(wrong.into()))).as_deref(),
            Some(wrong)
        );
        assert_eq!(
            problem(fence("string", bulk("soon"))).as_deref(),
            Some(TEXT_COUNTER)
        );
        // The scan's read of a number: no value, and no problem.
        let untouched = Reply::Array(vec![Reply::Int(-1), Reply::Int(5)]);
        assert_eq!(problem(untouched), None);
    }

    #[test]
    fn a_semaphore_is_its_limit_its_slots_and_the_queue() {
        let holder = Holder::this_process(&["job".into()]);
        let mut fields = empty_lock();
        fields[7] = Reply::Int(4);
        let slots_part = |slots: Vec<Reply>, refused: Reply| {
            Reply::Array(vec![
                bulk("2"),
                Reply::Int(2),
                Reply::Int(900),
                Reply::Int(-1),
                Reply::Int(900),
                Reply::Array(slots),
                Reply::Simple("zset".into()),
                Reply::Simple("hash".into()),
                Reply::Int(0),
                refused,
            ])
        };
        fields.extend([
            Reply::Array(vec![Reply::Int(0), Reply::Int(-2), Reply::Int(-2)]),
            Reply::Nil,
            Reply::Nil,
            slots_part(
                vec![bulk("a"), Reply::Int(900), bulk(&holder.record("a"))],
                Reply::Nil,
            ),
        ]);
        let slots = read_of(fields.clone())
            .slots()
            .remove(0)
            .state
            .expect("read");
        assert_eq!(slots.limit.as_deref(), Some("2"));
        assert!(!slots.is_lock);
        assert_eq!(slots.waiting, 4);
        assert_eq!(slots.slots.len(), 1);
        assert!(slots.slots[0].holder.is_some());
        // No semaphore there, but the name in use as a lock.
        let mut lock = empty_lock();
        lock[2] = bulk("t");
        assert_eq!(
            read_of(lock).slots().remove(0).state,
            Ok(Slots {
                limit: None,
                is_lock: true,
                waiting: 0,
                slots: vec![]
            })
        );
        // A slots key of another type fails the semaphore's part only.
        let wrong = "WRONGTYPE Operation against a key holding the wrong kind of value";
        let last = fields.len() - 1;
        fields[last] = slots_part(vec![], Reply::Error(wrong.into()));
        let read = read_of(fields);
        assert_eq!(
            read.slots().remove(0).state,
            Err(NodeError::Server(wrong.into()))
        );
        assert_eq!(read.inspections().remove(0).state, MasterState::Free);
    }

    #[test]
    fn readers_are_counted_and_listed() {
        let holder = Holder::this_process(&["job".into()]);
        let readers = |shares: Vec<Reply>, refused: Reply| {
            let mut fields = empty_lock();
            fields[2] = bulk(crate::lock::scripts::queue_lua::SHARED_MARKER);
            fields.push(Reply::Array(vec![
                Reply::Int(3),
                Reply::Int(2500),
                Reply::Int(2500),
                Reply::Array(shares),
                Reply::Simple("zset".into()),
                Reply::Simple("hash".into()),
                Reply::Int(0),
                refused,
            ]));
            read_of(fields).readers().remove(0).state
        };
        let listed = vec![
            bulk("shr-a"),
            Reply::Int(1500),
            bulk(&holder.record("shr-a")),
        ];
        let shares = readers(listed, Reply::Nil).expect("read");
        assert_eq!(shares.count, 3, "all of them counted, the first listed");
        assert_eq!(shares.shares.len(), 1);
        assert!(shares.shares[0].holder.is_some());
        let wrong = "WRONGTYPE Operation against a key holding the wrong kind of value";
        assert_eq!(
            readers(vec![], Reply::Error(wrong.into())),
            Err(NodeError::Server(wrong.into()))
        );
    }

    /// Three masters with the same answer: a majority, so a verdict.
    fn everywhere(fields: Vec<Reply>) -> KeyRead {
        let one = read_of(fields).masters.remove(0);
        KeyRead {
            masters: vec![one.clone(), one.clone(), one],
        }
    }

    #[test]
    fn a_lock_held_on_a_majority_is_held_by_its_token_alone() {
        let mut fields = empty_lock();
        fields[2] = bulk("t1");
        fields[3] = Reply::Int(5_000);
        fields[6] = fence("string", bulk("41"));
        let state = everywhere(fields).state();
        assert!(state.holds("t1"));
        assert!(!state.holds("t2"));
        assert_eq!(state.fence, Some(41));
        let Seen::Held(holders) = &state.seen else {
            panic!("{:?}", state.seen)
        };
        assert_eq!(holders[0].kind, crate::lock::scripts::tokens::Kind::Lock);
        assert_eq!(holders[0].masters, 3);
        assert!(state.failures().is_empty());
        let free = everywhere(empty_lock()).state();
        assert_eq!(free.seen, Seen::Free);
        assert!(!free.holds("t1"));
    }

    #[test]
    fn the_readers_marker_with_no_reader_on_a_majority_is_a_split() {
        let mut fields = empty_lock();
        fields[2] = bulk(crate::lock::scripts::queue_lua::SHARED_MARKER);
        fields[3] = Reply::Int(5_000);
        let state = everywhere(fields).state();
        assert_eq!(state.seen, Seen::Split);
        assert!(!state.holds(crate::lock::scripts::queue_lua::SHARED_MARKER));
    }

    #[test]
    fn no_answer_from_a_majority_is_unknown() {
        let state = KeyRead {
            masters: vec![
                (master(), Err(NodeError::Timeout)),
                (master(), Err(NodeError::Timeout)),
                read_of(empty_lock()).masters.remove(0),
            ],
        }
        .state();
        assert_eq!(state.seen, Seen::Unknown);
        let reach = state.reachability();
        assert_eq!(reach[0].1, Some(NodeError::Timeout));
        assert_eq!(reach[2].1, None);
    }
}
