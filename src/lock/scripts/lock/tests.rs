use super::*;

#[test]
fn release_and_extend_refuse_the_readers_marker_as_a_token() {
    assert!(
        EXTEND
            .code
            .contains(&format!("ARGV[1] ~= '{SHARED_MARKER}'"))
    );
    assert!(
        RELEASE
            .code
            .contains("local mine = ARGV[1] ~= SHARED and ARGV[1] ~= REVOKED")
    );
}

fn bulk(text: &str) -> Reply {
    Reply::Bulk(text.as_bytes().to_vec())
}

#[test]
fn votes_map_script_answers() {
    assert_eq!(acquire_vote(&Ok(Reply::Int(1))), Vote::Yes);
    assert_eq!(acquire_vote(&Ok(Reply::Array(vec![]))), Vote::No);
    assert_eq!(acquire_vote(&Ok(Reply::Int(0))), Vote::No);
    assert_eq!(acquire_vote(&Ok(Reply::Int(2))), Vote::Error);
    assert_eq!(acquire_vote(&Ok(Reply::Nil)), Vote::Error);
    assert_eq!(acquire_vote(&Err(NodeError::Timeout)), Vote::Error);
    assert_eq!(binary_vote(&Ok(Reply::Int(1))), Vote::Yes);
    assert_eq!(binary_vote(&Ok(Reply::Int(0))), Vote::No);
    assert_eq!(binary_vote(&Ok(Reply::Simple("OK".into()))), Vote::Error);
    assert_eq!(binary_vote(&Ok(bulk("1"))), Vote::Error);
}

#[test]
fn counters_parse_and_missing_is_zero() {
    assert_eq!(counter(&Reply::Nil), Some(0));
    assert_eq!(counter(&bulk("42")), Some(42));
    assert_eq!(counter(&bulk(" 42\n")), Some(42));
    assert_eq!(counter(&Reply::Int(7)), Some(7));
    assert_eq!(counter(&Reply::Int(-1)), None);
    assert_eq!(counter(&bulk("x")), None);
    assert_eq!(counter(&Reply::Array(vec![])), None);
}

#[test]
fn a_refusal_names_the_holder_and_the_ttl() {
    let holder = Holder::this_process(&["job".into()]);
    let reply = Reply::Array(vec![
        bulk(&holder.record("t1")),
        Reply::Int(2_500),
        bulk("t1"),
    ]);
    let found = refusal(&reply).expect("a refusal");
    assert!(found.holder.is_some());
    assert_eq!(found.expires_in, Some(Duration::from_millis(2_500)));
    // Held by a client without a record, with no TTL: nobody named, no expiry.
    let bare = Reply::Array(vec![Reply::Nil, Reply::Int(-1), bulk("other")]);
    let found = refusal(&bare).expect("a refusal");
    assert!(found.holder.is_none() && found.expires_in.is_none());
    assert!(!found.free && found.ticket.is_none() && found.waiters == 0);
    // Free, but others queued: the queue's refusal, with a ticket drawn.
    let queued = Reply::Array(vec![
        Reply::Nil,
        Reply::Int(-2),
        Reply::Nil,
        Reply::Int(3),
        Reply::Int(41),
    ]);
    let found = refusal(&queued).expect("a refusal");
    assert!(found.free);
    assert_eq!((found.waiters, found.ticket), (3, Some(41)));
    // Short or odd arrays are still refusals, naming nothing.
    assert!(refusal(&Reply::Array(vec![])).is_some());
    assert!(refusal(&Reply::Int(1)).is_none());
}
