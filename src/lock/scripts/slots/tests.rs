use super::*;

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

#[test]
fn votes_and_refusals_decode() {
    assert_eq!(slot_vote(&Ok(Reply::Int(1))), Vote::Yes);
    let taken = Reply::Array(vec![bulk("taken"), Reply::Int(7)]);
    assert_eq!(slot_vote(&Ok(taken.clone())), Vote::Yes);
    assert_eq!(granted_ticket(&taken), Some(7));
    assert_eq!(slot_refusal(&taken), None);
    assert_eq!(slot_vote(&Ok(Reply::Array(vec![bulk("lock")]))), Vote::No);
    assert_eq!(slot_vote(&Ok(Reply::Int(0))), Vote::No);
    assert_eq!(slot_vote(&Ok(Reply::Int(2))), Vote::Error);
    assert_eq!(slot_vote(&Err(NodeError::Timeout)), Vote::Error);
    let refusal = |fields| slot_refusal(&Reply::Array(fields));
    assert_eq!(refusal(vec![bulk("lock")]), Some(SlotRefusal::IsLock));
    assert_eq!(
        refusal(vec![bulk("lock"), Reply::Int(0)]),
        Some(SlotRefusal::IsLock)
    );
    assert_eq!(
        refusal(vec![bulk("lock"), Reply::Int(1)]),
        Some(SlotRefusal::IsShared)
    );
    assert_eq!(
        refusal(vec![bulk("limit"), bulk("3")]),
        Some(SlotRefusal::Limit("3".into()))
    );
    assert_eq!(refusal(vec![bulk("what")]), None);
    assert_eq!(slot_refusal(&Reply::Int(1)), None);
}

#[test]
fn a_full_refusal_names_the_holders_whose_record_matches_their_token() {
    let holder = Holder::this_process(&["backup".into()]);
    let reply = Reply::Array(vec![
        bulk("full"),
        Reply::Int(1_500),
        Reply::Int(7),
        Reply::Int(3),
        bulk("t1"),
        bulk(&holder.record("t1")),
        bulk("t2"),
        Reply::Nil,
        bulk("t3"),
        bulk(&holder.record("someone else")),
    ]);
    let Some(SlotRefusal::Full {
        holders,
        frees_in,
        extra,
        waiters,
    }) = slot_refusal(&reply)
    else {
        panic!("not a full refusal");
    };
    assert_eq!(frees_in, Some(Duration::from_millis(1_500)));
    assert_eq!((extra, waiters), (Some(7), 3));
    let named: Vec<(&str, bool)> = holders
        .iter()
        .map(|(t, h)| (t.as_str(), h.is_some()))
        .collect();
    assert_eq!(named, [("t1", true), ("t2", false), ("t3", false)]);
    // Free slots left to waiters ahead: no slot taken, no ticket.
    let ahead = Reply::Array(vec![
        bulk("full"),
        Reply::Int(-1),
        Reply::Nil,
        Reply::Int(2),
    ]);
    let Some(SlotRefusal::Full {
        frees_in, extra, ..
    }) = slot_refusal(&ahead)
    else {
        panic!("not a full refusal");
    };
    assert_eq!((frees_in, extra), (None, None));
}

#[test]
fn turns_decode_as_the_queue_reads_them() {
    assert!(matches!(slot_turn(&Ok(Reply::Int(1))), Some(Turn::Taken)));
    assert!(matches!(slot_turn(&Ok(Reply::Int(0))), Some(Turn::NoPlace)));
    let waiting = Reply::Array(vec![
        bulk("full"),
        Reply::Int(900),
        Reply::Int(2),
        Reply::Int(5),
    ]);
    let Some(Turn::Waiting(place)) = slot_turn(&Ok(waiting)) else {
        panic!("a place");
    };
    assert_eq!((place.position, place.waiters), (2, 5));
    assert_eq!(place.refusal.expires_in, Some(Duration::from_millis(900)));
    assert!(slot_turn(&Ok(Reply::Array(vec![bulk("lock")]))).is_none());
    assert!(slot_turn(&Err(NodeError::Timeout)).is_none());
}

/// The slots part of READ's answer (its limit, `is_lock` and `waiting` are read::key's: see
/// its tests): each live slot with its time left, and a record only for its own token.
#[test]
fn live_slots_decode_with_their_records() {
    let holder = Holder::this_process(&["job".into()]);
    let slots = slots_of(&[
        bulk("a"),
        Reply::Int(900),
        bulk(&holder.record("a")),
        bulk("b"),
        Reply::Int(20),
        Reply::Nil,
        bulk("c"),
        Reply::Int(20),
        bulk(&holder.record("a")),
    ]);
    assert_eq!(slots.len(), 3);
    assert_eq!(slots[0].expires_in, Duration::from_millis(900));
    assert!(slots[0].holder.is_some() && slots[1].holder.is_none());
    assert!(slots[2].holder.is_none(), "another token's record");
    assert!(slots.iter().all(|slot| slot.revocation.is_none()));
}

#[test]
fn a_revoked_slot_is_read_as_its_token_with_its_revocation() {
    let holder = Holder::this_process(&["job".into()]);
    let by = Holder::this_process(&["redlock".into()]).with_note(Some("hung".into()));
    let mut record = by.to_json();
    record["token"] = serde_json::Value::from(crate::lock::scripts::revoke::REVOKED_MARKER);
    record["revoked"] = serde_json::json!([{"token": "a", "record": holder.record("a")}]);
    let slots = slots_of(&[
        bulk(&format!("{REVOKED_SLOT_PREFIX}a")),
        Reply::Int(900),
        bulk(&record.to_string()),
    ]);
    let slot = &slots[0];
    assert_eq!(slot.token, "a");
    assert_eq!(slot.holder.as_ref(), Some(&holder));
    let revocation = slot.revocation.as_ref().expect("revoked");
    assert!(revocation.names("a"));
    assert_eq!(revocation.reason(), Some("hung"));
    assert_eq!(revoked_slot("sem2-x"), None);
}

#[test]
fn the_lua_knows_the_revoked_slots_prefix() {
    assert!(REVOKED_SLOTS.contains(&format!("local REVOKED_SLOT = '{REVOKED_SLOT_PREFIX}'")));
    // Tokens never start with it: a slot's is `sem<L>-`, a reader's `shr-`, a lock's hex.
    assert!(REVOKED_SLOT_PREFIX.starts_with("__redlock:"));
}
