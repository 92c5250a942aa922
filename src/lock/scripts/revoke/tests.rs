use super::*;

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

/// A revocation record as FORCE writes it (cjson's shape: `revoked` a list, numbers plain).
fn record(by: &Holder, revoked_token: &str, revoked_record: Option<&str>) -> String {
    let mut value = by.to_json();
    value["token"] = Value::from(REVOKED_MARKER);
    value["revoked"] = serde_json::json!([{"token": revoked_token, "record": revoked_record}]);
    value["until_ms"] = Value::from(1_764_000_000_000_u64);
    value.to_string()
}

#[test]
fn a_record_names_who_forced_why_and_whom() {
    let by = Holder::this_process(&["redlock".into(), "release".into()])
        .with_note(Some("runner hung".into()));
    let holder = Holder::this_process(&["deploy".into()]);
    let text = record(&by, "t1", Some(&holder.record("t1")));
    let found = Revocation::from_record(text.as_bytes()).expect("a revocation");
    assert_eq!(found.by, by);
    assert_eq!(found.reason(), Some("runner hung"));
    assert!(found.names("t1") && !found.names("t2"));
    assert_eq!(found.revoked[0].holder.as_ref(), Some(&holder));
    assert_eq!(found.until_ms, Some(1_764_000_000_000));
    assert!(
        found.describe().contains("reason \"runner hung\""),
        "{}",
        found.describe()
    );
    // A holder record (its token not the marker) is no revocation.
    assert!(Revocation::from_record(holder.record("t1").as_bytes()).is_none());
    // A revoked holder's record that names another token is not believed.
    let text = record(&by, "t1", Some(&holder.record("t9")));
    let found = Revocation::from_record(text.as_bytes()).expect("a revocation");
    assert_eq!(found.revoked[0].holder, None);
}

#[test]
fn force_answers_count_and_decode() {
    let holder = Holder::this_process(&["job".into()]);
    // The lock's holder, or readers (one with a record, one without).
    let forced = Reply::Array(vec![
        bulk("forced"),
        Reply::Array(vec![
            bulk("t1"),
            bulk(&holder.record("t1")),
            bulk("t2"),
            Reply::Nil,
        ]),
        Reply::Int(30_302),
    ]);
    assert_eq!(
        force_answer(&forced),
        Some(ForceAnswer::Forced {
            revoked: vec![
                Revoked {
                    token: "t1".into(),
                    holder: Some(holder),
                },
                Revoked {
                    token: "t2".into(),
                    holder: None,
                },
            ],
            closed_for: Duration::from_millis(30_302),
        })
    );
    assert_eq!(force_vote(&Ok(forced)), Vote::Yes);
    let again = Reply::Array(vec![bulk("revoked"), Reply::Nil, Reply::Int(500)]);
    assert_eq!(force_vote(&Ok(again)), Vote::Yes);
    assert_eq!(force_vote(&Ok(Reply::Array(vec![bulk("free")]))), Vote::No);
    // An answer this build no longer gives (`{'semaphore'}`: slots are revoked now).
    assert_eq!(
        force_vote(&Ok(Reply::Array(vec![bulk("semaphore")]))),
        Vote::Error
    );
    let odd = Reply::Array(vec![bulk("forced"), bulk("t1"), Reply::Int(1)]);
    assert_eq!(force_vote(&Ok(odd)), Vote::Error);
    assert_eq!(
        force_vote(&Ok(Reply::Array(vec![bulk("what")]))),
        Vote::Error
    );
    assert_eq!(force_vote(&Ok(Reply::Int(1))), Vote::Error);
    assert_eq!(force_vote(&Err(NodeError::Timeout)), Vote::Error);
}

#[test]
fn an_extension_refused_by_a_revocation_says_so() {
    let by = Holder::this_process(&[]).with_note(Some("why".into()));
    let reply = Reply::Array(vec![bulk("revoked"), bulk(&record(&by, "t1", None))]);
    assert_eq!(extend_vote(&Ok(reply.clone())), Vote::No);
    let found = revoked_reply(&reply)
        .expect("a revocation reply")
        .expect("a record");
    assert!(found.names("t1"));
    assert_eq!(extend_vote(&Ok(Reply::Int(1))), Vote::Yes);
    assert_eq!(extend_vote(&Ok(Reply::Int(0))), Vote::No);
    assert_eq!(extend_vote(&Ok(bulk("x"))), Vote::Error);
    assert!(revoked_reply(&Reply::Int(0)).is_none());
}

#[test]
fn a_release_that_acknowledged_a_revocation_counts_as_done_and_says_by_whom() {
    let by = Holder::this_process(&[]).with_note(Some("why".into()));
    let reply = Reply::Array(vec![bulk("acknowledged"), bulk(&record(&by, "t1", None))]);
    assert_eq!(release_vote(&Ok(reply.clone())), Vote::Yes);
    let found = acknowledged_reply(&reply)
        .expect("an acknowledgement")
        .expect("a record");
    assert_eq!(found.reason(), Some("why"));
    assert!(found.names("t1"));
    // A record that is not one (a slot's revoked without a record) still counts as done.
    let bare = Reply::Array(vec![bulk("acknowledged"), bulk("")]);
    assert_eq!(release_vote(&Ok(bare.clone())), Vote::Yes);
    assert_eq!(acknowledged_reply(&bare), Some(None));
    assert_eq!(release_vote(&Ok(Reply::Int(1))), Vote::Yes);
    assert_eq!(release_vote(&Ok(Reply::Int(0))), Vote::No);
    // An extension's refusal is no release.
    let revoked = Reply::Array(vec![bulk("revoked"), bulk(&record(&by, "t1", None))]);
    assert_eq!(release_vote(&Ok(revoked.clone())), Vote::Error);
    assert!(acknowledged_reply(&revoked).is_none());
    assert_eq!(release_vote(&Ok(bulk("x"))), Vote::Error);
}

#[test]
fn the_lua_knows_the_marker() {
    assert!(MARKER.contains(&format!("'{REVOKED_MARKER}'")));
    assert!(
        super::super::lock::EXTEND
            .code
            .contains(&format!("current == '{REVOKED_MARKER}'"))
    );
}
