use super::*;

const NOW: u64 = 1_800_000_000_000;

fn record(pid: u32) -> String {
    format!(r#"{{"host":"h","pid":{pid},"user":"u","command":"job","since_ms":{NOW},"token":"x"}}"#)
}

fn taken(token: &str, at: u64, pid: u32) -> Vec<u8> {
    serde_json::json!({"e": "taken", "t": token, "at": at.to_string(), "ttl": "30000",
                       "who": record(pid)})
    .to_string()
    .into_bytes()
}

fn event(kind: &str, token: &str, at: u64, how: &str) -> Vec<u8> {
    serde_json::json!({"e": kind, "t": token, "at": at.to_string(), "how": how})
        .to_string()
        .into_bytes()
}

/// A master's history from its events, oldest first (as written), and what K holds.
fn master(events: &[Vec<u8>], current: Option<&str>) -> MasterHistory {
    MasterHistory {
        events: events.iter().rev().cloned().collect(),
        current: current.map(str::to_string),
    }
}

#[test]
fn one_turn_recorded_on_every_master_appears_once_with_its_exit_code() {
    let events = [
        taken("a", NOW - 5000, 7),
        event("end", "a", NOW - 1000, "exit 3"),
    ];
    let masters = [
        master(&events, None),
        master(&events, None),
        master(&events, None),
    ];
    let turns = merge(&masters, 2, NOW);
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].end, TurnEnd::Exited(3));
    assert_eq!(turns[0].held_for(), Some(Duration::from_secs(4)));
    assert_eq!(turns[0].masters, 3);
    assert_eq!(turns[0].holder.as_ref().map(|h| h.pid), Some(7));
}

#[test]
fn a_master_that_missed_the_end_or_the_take_hides_neither() {
    let take = taken("a", NOW - 5000, 7);
    let end = event("end", "a", NOW - 1000, "signal 15");
    // Master 1 was down for the release; master 2 restarted empty after the take.
    let masters = [
        master(&[take.clone(), end.clone()], None),
        master(&[take], None),
        master(&[end], None),
    ];
    let turns = merge(&masters, 2, NOW);
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].end, TurnEnd::Signalled(15));
    assert_eq!(turns[0].started_ms, Some(NOW - 5000));
    assert_eq!(turns[0].masters, 2);
}

#[test]
fn an_unended_turn_is_holding_on_a_quorum_and_expired_otherwise() {
    let take = [taken("a", NOW - 5000, 7)];
    let holding = [
        master(&take, Some("a")),
        master(&take, Some("a")),
        master(&take, None),
    ];
    assert_eq!(merge(&holding, 2, NOW)[0].end, TurnEnd::Holding);
    let gone = [
        master(&take, None),
        master(&take, Some("a")),
        master(&take, None),
    ];
    let turns = merge(&gone, 2, NOW);
    assert_eq!(turns[0].end, TurnEnd::Expired);
    assert_eq!(turns[0].held_for(), None);
}

#[test]
fn an_attempt_undone_everywhere_is_no_turn_but_one_left_taken_somewhere_is() {
    let undone = [
        taken("a", NOW - 5000, 7),
        event("undone", "a", NOW - 4990, ""),
    ];
    let masters = [
        master(&undone, None),
        master(&undone, None),
        master(&[], None),
    ];
    assert!(merge(&masters, 2, NOW).is_empty());
    let masters = [
        master(&undone, None),
        master(&undone[..1], None),
        master(&[], None),
    ];
    assert_eq!(merge(&masters, 2, NOW)[0].end, TurnEnd::Expired);
}

#[test]
fn a_waiters_partial_hold_undone_then_taken_again_is_one_turn() {
    let events = [
        taken("w", NOW - 9000, 8),
        event("undone", "w", NOW - 8990, ""),
        taken("w", NOW - 6000, 8),
        event("end", "w", NOW - 2000, "exit 0"),
    ];
    let turns = merge(&[master(&events, None), master(&events[2..], None)], 2, NOW);
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].end, TurnEnd::Exited(0));
    assert_eq!(turns[0].started_ms, Some(NOW - 9000));
}

#[test]
fn a_revocation_outranks_the_revoked_holders_own_release() {
    let by = record(99);
    let revoked = serde_json::json!({"e": "revoked", "t": "a", "at": (NOW - 3000).to_string(),
                                     "by": by})
    .to_string()
    .into_bytes();
    let events = [
        taken("a", NOW - 5000, 7),
        revoked,
        event("end", "a", NOW - 1000, "exit 0"),
    ];
    let turns = merge(&[master(&events, None)], 1, NOW);
    let TurnEnd::Revoked { by } = &turns[0].end else {
        panic!("{:?}", turns[0].end)
    };
    assert_eq!(by.as_ref().map(|h| h.pid), Some(99));
}

#[test]
fn turns_come_newest_first_and_those_past_the_age_are_left_out() {
    let events = [
        taken("old", NOW - AGE_MS - 1, 1),
        event("end", "old", NOW - AGE_MS + 10, "exit 0"),
        taken("b", NOW - 8000, 2),
        event("end", "b", NOW - 7000, "exit 0"),
        taken("c", NOW - 6000, 3),
        event("end", "c", NOW - 5000, "lost"),
    ];
    let turns = merge(&[master(&events, None)], 1, NOW);
    let tokens: Vec<&str> = turns.iter().map(|t| t.token.as_str()).collect();
    // "old"'s take is past the age: only its end is left, which still names it.
    assert_eq!(tokens, ["c", "b", "old"]);
    assert_eq!(turns[0].end, TurnEnd::Lost);
    assert_eq!(turns[2].started_ms, None);
}

#[test]
fn a_waiter_that_never_ran_keeps_its_record_and_how_it_left() {
    let superseded = serde_json::json!({"e": "superseded", "t": "w", "at": NOW.to_string(),
                                        "who": record(5), "by": record(6)})
    .to_string()
    .into_bytes();
    let left = serde_json::json!({"e": "left", "t": "v", "at": (NOW - 1).to_string(),
                                  "how": "gave up", "who": record(4)})
    .to_string()
    .into_bytes();
    let turns = merge(&[master(&[left, superseded], None)], 1, NOW);
    assert_eq!(turns[0].holder.as_ref().map(|h| h.pid), Some(5));
    assert!(matches!(&turns[0].end, TurnEnd::Superseded { by: Some(h) } if h.pid == 6));
    assert!(!turns[0].end.held());
    assert_eq!(turns[1].end, TurnEnd::Left("gave up".into()));
    assert_eq!(turns[1].end.word(), "gave_up");
}

#[test]
fn entries_that_are_not_redlocks_are_skipped() {
    let masters = [master(
        &[
            b"not json".to_vec(),
            b"{\"e\": 1}".to_vec(),
            taken("a", NOW - 10, 1),
        ],
        Some("a"),
    )];
    let turns = merge(&masters, 1, NOW);
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].end, TurnEnd::Holding);
}
