//! The line policy's checks (see `policies` for the model).

use super::{ONE_POLICY_STANDS, OWN_POLICY, PoliciesModel, Rule};
use crate::model_kit::check;

/// The pairs checked: the first-come waiter drew the earlier ticket or the later, and the
/// superseding one has no order or a higher one.
const PAIRS: [((u8, u8), (u8, u8)); 4] = [
    ((0, 1), (0, 2)),
    ((0, 2), (0, 1)),
    ((0, 1), (5, 2)),
    ((0, 2), (5, 1)),
];

/// Every property holds for each pair, arriving in every order on every master.
#[test]
fn waiters_of_both_policies_leave_one_standing() {
    for (fifo, superseding) in PAIRS {
        check::holds(
            PoliciesModel {
                fifo,
                superseding,
                rule: Rule::Sound,
            },
            |_, path| format!("{:?}", path.into_actions()),
        );
    }
}

/// The known-bad rules, each caught by the property it breaks: a refusal that refuses at once
/// (both waiters refused), and a first-come waiter (a reader, as READ_WAIT was) that does not
/// check the policy (the superseding waiter leaves as superseded by it).
#[test]
fn the_model_catches_a_refusal_that_refuses_and_a_turn_without_the_check() {
    for (rule, (fifo, superseding), property) in [
        (Rule::AnyPolicyRefusal, PAIRS[0], ONE_POLICY_STANDS),
        (Rule::NoFifoCheck, PAIRS[1], OWN_POLICY),
    ] {
        let model = PoliciesModel {
            fifo,
            superseding,
            rule,
        };
        let path = check::until_caught(model, property)
            .unwrap_or_else(|| panic!("{rule:?} was not caught"))
            .into_actions();
        println!("{rule:?} caught in {} steps: {path:?}", path.len());
    }
}
