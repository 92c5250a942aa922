use super::*;

/// Keys of every layout case: a hash tag, none, an unclosed brace, a `}` without a hash
/// tag (the decimal tag), an empty tag, and the separator inside the key.
const LAYOUT_CASES: [&str; 11] = [
    "deploy-prod",
    "{user1}.deploy",
    "a{b",
    "a}b",
    "{}x",
    "}",
    "{",
    "x{}y{z}",
    "ünïcödé",
    "foo{{bar}}zap",
    "a:b:c",
];

#[test]
fn the_layout_names_each_key_as_its_own_function_does() {
    for key in LAYOUT_CASES {
        let names = Names::of(key);
        let expected = [
            key.to_string(),
            holder(key),
            queue(key),
            lease(key),
            waiters(key),
            tickets(key),
            slots(key),
            limit(key),
            readers(key),
            reader_holders(key),
            slot_holders(key),
            fence(key),
            order(key),
            policy(key),
            evicted(key),
            history(key),
        ];
        assert_eq!(
            names.keys(key),
            expected.each_ref().map(String::as_str),
            "{key:?}"
        );
    }
}

#[test]
fn auxiliary_keys_share_the_lock_keys_slot() {
    for key in LAYOUT_CASES {
        let names = Names::of(key);
        let token = "0123456789abcdef0123456789abcdef";
        let wake = wake_channel(key, token);
        assert_eq!(
            wake,
            format!("{}{token}{}", names.wake_prefix, names.wake_suffix)
        );
        for aux in [
            holder(key),
            fence(key),
            order(key),
            policy(key),
            evicted(key),
            released_channel(key),
            queue(key),
            lease(key),
            waiters(key),
            tickets(key),
            wake,
            names.holder,
            names.queue,
            names.lease,
            names.waiters,
            names.tickets,
            names.readers,
            names.reader_holders,
            slots(key),
            limit(key),
            slot_holders(key),
            readers(key),
            reader_holders(key),
        ] {
            assert_eq!(key_slot(&aux), key_slot(key), "{key:?} -> {aux:?}");
            assert!(aux.starts_with(RESERVED_PREFIX), "{aux}");
            assert!(aux.ends_with(key), "{aux}");
        }
    }
    assert_eq!(
        holder("deploy-prod"),
        "__redlock:{deploy-prod}:holder:deploy-prod"
    );
    assert_eq!(fence("{u1}.job"), "__redlock:{u1}:fence:{u1}.job");
    assert_eq!(slots("backup"), "__redlock:{backup}:slots:backup");
    assert_eq!(
        limit("a}b"),
        format!("__redlock:{{{}}}:limit:a}}b", slot_tag("a}b"))
    );
    assert_eq!(slot_holders("{u1}.job"), "__redlock:{u1}:holders:{u1}.job");
}

#[test]
fn every_slot_has_a_small_decimal_tag() {
    let mut seen = vec![false; 16384];
    let mut left = seen.len();
    let mut n = 0u32;
    while left > 0 {
        let s = usize::from(slot(n.to_string().as_bytes()));
        if !seen[s] {
            seen[s] = true;
            left -= 1;
        }
        n += 1;
    }
    // The search in `slot_tag` is bounded by this: a few hundred thousand CRCs at worst.
    assert!(n < 1_000_000, "{n}");
}

#[test]
fn distinct_locks_never_share_an_auxiliary_key() {
    let keys = [
        "a",
        "{a}",
        "{a}b",
        "a}",
        "}a",
        "b{a}",
        "x:holder:a",
        "holder:a",
    ];
    let mut names: Vec<String> = keys
        .iter()
        .flat_map(|k| {
            [
                holder(k),
                fence(k),
                order(k),
                policy(k),
                evicted(k),
                slots(k),
                limit(k),
                slot_holders(k),
                readers(k),
                reader_holders(k),
            ]
        })
        .collect();
    names.sort();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before);
}

#[test]
fn reserved_prefixes_are_refused_as_lock_keys() {
    assert_eq!(check_lock_key(""), Err(KeyError::Empty));
    assert!(check_lock_key("deploy").is_ok());
    assert!(check_lock_key("redlock:deploy").is_ok());
    for key in [
        holder("x"),
        fence("x"),
        slots("x"),
        limit("x"),
        slot_holders("x"),
        readers("x"),
        reader_holders("x"),
        "redlock:holder:x".into(),
        "redlock:fence:x".into(),
    ] {
        assert!(check_lock_key(&key).is_err(), "{key}");
    }
}
#[test]
fn parse_inverts_the_layout() {
    let extra = ["x:holder:a", "}:fence:{", "__redlock:{a}:holder:a"];
    for key in LAYOUT_CASES.into_iter().chain(extra) {
        for (kind, name) in [
            ("holder", holder(key)),
            ("fence", fence(key)),
            ("order", order(key)),
            ("policy", policy(key)),
            ("evicted", evicted(key)),
            ("queue", queue(key)),
            ("lease", lease(key)),
            ("waiters", waiters(key)),
            ("tickets", tickets(key)),
        ] {
            assert_eq!(parse(&name), Some((kind, key)), "{name:?}");
        }
    }
    // The decimal-tag case: K contains `}` but has no hash tag.
    let name = holder("a}b");
    let tag = name
        .strip_prefix("__redlock:{")
        .and_then(|r| r.split_once('}'))
        .map(|(t, _)| t)
        .unwrap();
    assert!(tag.bytes().all(|b| b.is_ascii_digit()), "{name}");
    assert_eq!(parse(&name), Some(("holder", "a}b")));
    // A key with `}` right after the tag's brace reads back whole.
    assert_eq!(parse(&fence("}")), Some(("fence", "}")));
}

#[test]
fn parse_refuses_names_the_layout_never_writes() {
    for name in [
        "deploy",
        "redlock:holder:x",
        "__redlock:",
        "__redlock:x",
        "__redlock:{x}",
        "__redlock:{x}:holder",
        "__redlock:{x}:holder:",
        "__redlock:{x}holder:x",
        "__redlock:{x}::x",
        "__redlock:{x}:Holder:x",
        "__redlock:{x}:hol-der:x",
        // The wrong tag for the key: not a name redlock writes.
        "__redlock:{y}:holder:x",
        "__redlock:{1}:holder:a}b",
        "__redlock:{a}:holder:{b}c",
        // The doctor's scratch key: a tag but no kind and key after it.
        "__redlock:{doctor}:scratch",
    ] {
        assert_eq!(parse(name), None, "{name:?}");
    }
    // The doctor's scratch lock names a reserved key; it still reads back.
    let scratch = "__redlock:{doctor}:scratch:0f";
    assert_eq!(parse(&holder(scratch)), Some(("holder", scratch)));
}
