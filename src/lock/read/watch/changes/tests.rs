use std::time::Duration;

use super::*;
use crate::lock::scripts::tokens::Kind;

fn holder(token: &str, ttl_ms: u64) -> HolderSeen {
    HolderSeen {
        token: token.into(),
        kind: Kind::Lock,
        holder: None,
        masters: 2,
        expires_in: Some(Duration::from_millis(ttl_ms)),
    }
}

fn master(port: u16) -> Master {
    Master::parse(&format!("redis://127.0.0.1:{port}")).unwrap()
}

/// Three masters, all answering, read `ms` after `t0`.
fn read(t0: Instant, ms: u64, seen: Seen) -> Observation {
    Observation {
        seen,
        masters: (1..=3).map(|port| (master(port), None)).collect(),
        at: t0 + Duration::from_millis(ms),
        done: t0 + Duration::from_millis(ms + 1),
    }
}

#[test]
fn the_first_read_says_the_current_state_once() {
    let t0 = Instant::now();
    let mut said = Reported::default();
    let held = Seen::Held(vec![holder("a", 30_000)]);
    assert_eq!(
        said.update(&read(t0, 0, held.clone()), false),
        [Change::Current]
    );
    assert_eq!(said.update(&read(t0, 10, held.clone()), false), []);
    // A renewal changes the TTL, not the holder: nothing to say.
    let renewed = Seen::Held(vec![holder("a", 30_000)]);
    assert_eq!(said.update(&read(t0, 20_000, renewed), true), []);
}

#[test]
fn a_hand_off_is_a_release_then_a_take() {
    let t0 = Instant::now();
    let mut said = Reported::default();
    said.update(&read(t0, 0, Seen::Free), false);
    let a = holder("a", 30_000);
    let b = holder("b", 30_000);
    assert_eq!(
        said.update(&read(t0, 10, Seen::Held(vec![a.clone()])), false),
        [Change::Taken(a.clone())]
    );
    assert_eq!(
        said.update(&read(t0, 20, Seen::Held(vec![b.clone()])), true),
        [Change::Released(a), Change::Taken(b.clone())]
    );
    assert_eq!(
        said.update(&read(t0, 30, Seen::Free), false),
        [Change::Released(b)]
    );
}

#[test]
fn a_holder_gone_after_its_ttl_expired_unless_a_release_was_announced() {
    let t0 = Instant::now();
    let a = holder("a", 1_000);
    let mut said = Reported::default();
    said.update(&read(t0, 0, Seen::Held(vec![a.clone()])), false);
    assert_eq!(said.first_expiry(), Some(t0 + Duration::from_millis(1_000)));
    // A read that ended before the TTL could run out: released, notice or not.
    let mut early = Reported::default();
    early.update(&read(t0, 0, Seen::Held(vec![a.clone()])), false);
    assert_eq!(
        early.update(&read(t0, 998, Seen::Free), false),
        [Change::Released(a.clone())]
    );
    // One that may have been answered after it: expired.
    assert_eq!(
        said.update(&read(t0, 999, Seen::Free), false),
        [Change::Expired(a.clone())]
    );
    let mut announced = Reported::default();
    announced.update(&read(t0, 0, Seen::Held(vec![a.clone()])), false);
    assert_eq!(
        announced.update(&read(t0, 1_500, Seen::Free), true),
        [Change::Released(a)]
    );
}

#[test]
fn an_unknown_state_is_said_once_and_the_state_again_when_known() {
    let t0 = Instant::now();
    let a = holder("a", 30_000);
    let mut said = Reported::default();
    said.update(&read(t0, 0, Seen::Held(vec![a.clone()])), false);
    assert_eq!(
        said.update(&read(t0, 10, Seen::Unknown), false),
        [Change::Unknown]
    );
    assert_eq!(said.update(&read(t0, 20, Seen::Unknown), false), []);
    // Known again, nothing changed: the state is said, as at the start.
    assert_eq!(
        said.update(&read(t0, 30, Seen::Held(vec![a.clone()])), false),
        [Change::Current]
    );
    // Unknown until the holder's TTL ran out, then free: it expired meanwhile.
    said.update(&read(t0, 40, Seen::Unknown), false);
    assert_eq!(
        said.update(&read(t0, 40_000, Seen::Free), false),
        [Change::Expired(a)]
    );
}

#[test]
fn a_split_loses_the_holder_and_is_said_once() {
    let t0 = Instant::now();
    let a = holder("a", 30_000);
    let mut said = Reported::default();
    said.update(&read(t0, 0, Seen::Held(vec![a.clone()])), false);
    assert_eq!(
        said.update(&read(t0, 10, Seen::Split), false),
        [Change::Lost(a), Change::Split]
    );
    assert_eq!(said.update(&read(t0, 20, Seen::Split), false), []);
    assert_eq!(
        said.update(&read(t0, 30, Seen::Free), false),
        [Change::Current]
    );
}

#[test]
fn readers_and_slots_come_and_go_one_by_one() {
    let t0 = Instant::now();
    let reader = |token: &str| HolderSeen {
        kind: Kind::Reader,
        ..holder(token, 30_000)
    };
    let (r1, r2) = (reader("shr-1"), reader("shr-2"));
    let mut said = Reported::default();
    said.update(&read(t0, 0, Seen::Held(vec![r1.clone()])), false);
    assert_eq!(
        said.update(
            &read(t0, 10, Seen::Held(vec![r1.clone(), r2.clone()])),
            false
        ),
        [Change::Taken(r2.clone())]
    );
    assert_eq!(
        said.update(&read(t0, 20, Seen::Held(vec![r2])), false),
        [Change::Released(r1)]
    );
}

#[test]
fn a_master_down_is_said_once_and_its_return_too() {
    let t0 = Instant::now();
    let mut said = Reported::default();
    let mut down = read(t0, 0, Seen::Free);
    down.masters[1].1 = Some(NodeError::Timeout);
    let shown = master(2).to_string();
    assert_eq!(
        said.update(&down, false),
        [
            Change::Current,
            Change::Down {
                master: shown.clone(),
                error: NodeError::Timeout
            }
        ]
    );
    assert_eq!(said.update(&down, false), []);
    assert_eq!(
        said.update(&read(t0, 10, Seen::Free), false),
        [Change::Up { master: shown }]
    );
    assert_eq!(said.update(&read(t0, 20, Seen::Free), false), []);
}

fn revocation(of: &str) -> Revocation {
    let record = format!(
        r#"{{"host":"ops","pid":7,"user":"root","command":"redlock","since_ms":1,"note":"hung","token":"{marker}","revoked":[{{"token":"{of}","record":null}}],"until_ms":2}}"#,
        marker = crate::lock::scripts::revoke::REVOKED_MARKER
    );
    Revocation::from_record(record.as_bytes()).expect("a revocation record")
}

#[test]
fn a_forced_release_says_the_holder_revoked_and_the_key_opened_after() {
    let t0 = Instant::now();
    let mut said = Reported::default();
    let a = holder("a", 30_000);
    said.update(&read(t0, 0, Seen::Held(vec![a.clone()])), false);
    let closed = Seen::Revoked(revocation("a"));
    assert_eq!(
        said.update(&read(t0, 10, closed.clone()), false),
        [Change::Revoked(a, revocation("a"))]
    );
    // Closed stays closed: nothing more to say.
    assert_eq!(said.update(&read(t0, 20, closed.clone()), false), []);
    // Opened by the revoked holder's release: the state, once.
    assert_eq!(
        said.update(&read(t0, 30, Seen::Free), true),
        [Change::Current]
    );
    // Forced between two reads, its holder never seen: the closed state, once.
    assert_eq!(
        said.update(&read(t0, 40, closed.clone()), false),
        [Change::Current]
    );
    assert_eq!(said.update(&read(t0, 50, closed), false), []);
}
