use std::time::Duration;

use super::super::held::{limit_of_token, new_token, slot_token};
use super::*;
use crate::lock::quorum::slot_refusals::full;
use crate::lock::quorum::tally::slot_quorum;
use crate::lock::scripts::holder::Holder;

#[test]
fn the_quorum_admits_at_most_l_holders_and_is_the_majority_for_one() {
    for nodes in 1..=9 {
        assert_eq!(
            slot_quorum(nodes, 1),
            crate::lock::quorum::tally::majority(nodes)
        );
        for limit in 1..=8u32 {
            let q = slot_quorum(nodes, limit);
            let l = limit as usize;
            assert!(q <= nodes, "N {nodes} L {limit}");
            // L+1 holders need more slots than the masters have...
            assert!((l + 1) * q > l * nodes, "N {nodes} L {limit}");
            // ...and q is the smallest such number.
            assert!((l + 1) * (q - 1) <= l * nodes, "N {nodes} L {limit}");
        }
    }
    // The table in docs/semaphore.md.
    let table = [
        (3, 2, 3),
        (5, 2, 4),
        (5, 3, 4),
        (7, 2, 5),
        (7, 3, 6),
        (9, 2, 7),
    ];
    for (n, l, q) in table {
        assert_eq!(slot_quorum(n, l), q, "N {n} L {l}");
    }
}

#[test]
fn a_slot_token_carries_its_limit() {
    let token = slot_token(3);
    assert!(token.starts_with("sem3-"), "{token}");
    assert_eq!(limit_of_token(&token), Some(3));
    assert_eq!(limit_of_token(&new_token()), None);
    for lock_like in ["sem0-abc", "sem-abc", "sem2-", "semx-a", "sem2"] {
        assert_eq!(limit_of_token(lock_like), None, "{lock_like}");
    }
}

#[test]
fn a_full_refusal_names_each_holder_once_the_soonest_slot_and_the_ticket() {
    let holder = Holder::this_process(&["backup".into()]);
    let refusal = |holders, ms, ticket| SlotRefusal::Full {
        holders,
        frees_in: Some(Duration::from_millis(ms)),
        extra: ticket,
        waiters: 2,
    };
    let refusals = vec![
        refusal(
            vec![("a".into(), None), ("b".into(), Some(holder.clone()))],
            900,
            Some(7),
        ),
        refusal(
            vec![("a".into(), Some(holder.clone())), ("b".into(), None)],
            400,
            Some(8),
        ),
    ];
    let (failure, ticket) = full(2, refusals.clone(), Vec::new(), 2);
    let AttemptFailure::Full {
        limit,
        holders,
        frees_in,
        waiters,
        place,
    } = failure
    else {
        panic!("not full");
    };
    assert_eq!((limit, waiters, place), (2, 2, None));
    assert_eq!(frees_in, Some(Duration::from_millis(400)));
    assert_eq!(holders.len(), 2);
    assert!(holders.iter().all(|(_, h)| h.is_some()));
    assert_eq!(ticket, Some(8));
    // A ticket counts only when enough masters drew one; those drawn where a slot was
    // given count too.
    assert_eq!(full(2, refusals.clone(), Vec::new(), 3).1, None);
    assert_eq!(full(2, refusals, vec![9], 3).1, Some(9));
}
