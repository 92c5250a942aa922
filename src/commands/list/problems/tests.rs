use super::super::view::tests::read;
use super::*;
use crate::lock::{FenceRead, Holder, Marker, QueuedWaiter};

/// The findings of lock "k" read as `reads` on masters 0, 1, ...
fn find(reads: Vec<LockRead>, idle: Duration) -> Vec<Problem> {
    let mut findings = Findings::new(idle);
    findings.lock(&FoundLock {
        key: "k".into(),
        reads: reads.into_iter().map(Ok).collect(),
    });
    assert_eq!(findings.count, findings.kept.len());
    findings.kept
}

fn kinds(problems: &[Problem]) -> Vec<(&'static str, usize, &str)> {
    problems
        .iter()
        .map(|p| (p.kind.name(), p.master, p.name.as_str()))
        .collect()
}

const DAY: Duration = Duration::from_secs(86_400);

#[test]
fn a_healthy_lock_has_no_problems() {
    let mut held = read(Some("t"));
    held.holder_record = Some(r#"{"token":"t"}"#.into());
    held.holder_ttl = Ttl::Left(Duration::from_secs(20));
    held.fence = Some(FenceRead {
        ttl: Ttl::Forever,
        idle: Some(DAY * 365),
        malformed: None,
        value: None,
    });
    assert_eq!(find(vec![held, read(None)], DAY), []);
}

#[test]
fn readers_keys_without_ttl_or_without_their_marker() {
    let mut healthy = read(Some(Marker::Readers.value()));
    healthy.readers = crate::lock::ReadersRead {
        live: 2,
        ttl: Some(Ttl::Left(Duration::from_secs(20))),
        holders_ttl: Some(Ttl::Left(Duration::from_secs(20))),
        shares: Vec::new(),
        ..Default::default()
    };
    assert_eq!(find(vec![healthy.clone()], DAY), []);
    let mut forever = healthy.clone();
    forever.readers.ttl = Some(Ttl::Forever);
    forever.readers.holders_ttl = Some(Ttl::Forever);
    let mut replaced = healthy.clone();
    replaced.token = Some("foreign".into());
    let mut deleted = healthy;
    deleted.token = None;
    deleted.ttl = Ttl::Missing;
    let found = find(vec![forever, replaced, deleted], DAY);
    assert_eq!(
        kinds(&found),
        [
            ("no_ttl", 0, "__redlock:{k}:readers:k"),
            ("no_ttl", 0, "__redlock:{k}:readerholders:k"),
            ("stale_readers", 1, "__redlock:{k}:readers:k"),
            ("stale_readers", 2, "__redlock:{k}:readers:k"),
        ]
    );
}

#[test]
fn keys_without_ttl_except_counters() {
    let mut read = read(Some("t"));
    read.ttl = Ttl::Forever;
    read.holder_record = Some(r#"{"token":"t"}"#.into());
    read.holder_ttl = Ttl::Forever;
    read.queue.lease_ttl = Some(Ttl::Forever);
    read.fence = Some(FenceRead {
        ttl: Ttl::Forever,
        idle: None,
        malformed: None,
        value: None,
    });
    let found = find(vec![read], DAY);
    assert_eq!(
        kinds(&found),
        [
            ("no_ttl", 0, "k"),
            ("no_ttl", 0, "__redlock:{k}:holder:k"),
            ("no_ttl", 0, "__redlock:{k}:lease:k"),
        ]
    );
    assert!(found[1].action.contains("DEL '__redlock:{k}:holder:k'"));
}

#[test]
fn holder_records_without_their_lock() {
    let mut gone = read(None);
    gone.holder_record = Some(r#"{"token":"t"}"#.into());
    gone.holder_ttl = Ttl::Left(Duration::from_secs(9));
    let mut replaced = read(Some("other"));
    replaced.holder_record = Some(r#"{"token":"t"}"#.into());
    replaced.holder_ttl = Ttl::Left(Duration::from_secs(9));
    let found = find(vec![gone, replaced], DAY);
    assert_eq!(
        kinds(&found),
        [
            ("stale_holder", 0, "__redlock:{k}:holder:k"),
            ("stale_holder", 1, "__redlock:{k}:holder:k"),
        ]
    );
    assert!(found[0].detail.contains("gone"), "{}", found[0].detail);
    assert!(found[1].detail.contains("another token"));
    assert!(
        found[0].action.contains("expires in 9s"),
        "{}",
        found[0].action
    );
}

#[test]
fn lapsed_waiters() {
    let mut read = read(Some("t"));
    read.queue.len = 1;
    read.queue.waiters = vec![QueuedWaiter {
        token: "w1".into(),
        ticket: 3,
        lapses_in: None,
        holder: Holder::from_json(
            br#"{"host":"ci-4","pid":99,"user":"ci","command":"c","since_ms":1}"#,
        ),
    }];
    read.queue.lapsed = vec![("w1".into(), 940_000)];
    let found = find(vec![read], DAY);
    assert_eq!(kinds(&found), [("dead_waiter", 0, "__redlock:{k}:queue:k")]);
    assert!(found[0].detail.contains("w1 (ci-4 pid 99, user ci)"));
    assert!(
        found[0].detail.contains("lapsed 1m ago"),
        "{}",
        found[0].detail
    );
    assert!(
        found[0]
            .action
            .contains("HDEL '__redlock:{k}:waiters:k' w1")
    );
}

#[test]
fn counters_only_when_idle_long_enough_and_their_lock_absent() {
    let counter = |idle| {
        Some(FenceRead {
            ttl: Ttl::Forever,
            idle: Some(idle),
            malformed: None,
            value: None,
        })
    };
    let mut idle = read(None);
    idle.fence = counter(DAY * 40);
    let mut recent = read(None);
    recent.fence = counter(DAY * 2);
    let mut held = read(Some("t"));
    held.fence = counter(DAY * 40);
    let mut untracked = read(None);
    untracked.fence = Some(FenceRead {
        ttl: Ttl::Forever,
        idle: None,
        malformed: None,
        value: None,
    });
    let found = find(vec![idle, recent, held, untracked], DAY * 30);
    assert_eq!(kinds(&found), [("idle_fence", 0, "__redlock:{k}:fence:k")]);
    assert!(found[0].action.contains("restarts the numbers"));
}

#[test]
fn strays_without_ttl() {
    let mut findings = Findings::new(DAY);
    findings.stray(&StrayKey {
        master: 1,
        name: "__redlock:junk".into(),
        ttl: Ok(Ttl::Forever),
    });
    findings.stray(&StrayKey {
        master: 0,
        name: "__redlock:fine".into(),
        ttl: Ok(Ttl::Left(DAY)),
    });
    assert_eq!(kinds(&findings.kept), [("no_ttl", 1, "__redlock:junk")]);
}

#[test]
fn findings_past_the_first_ones_are_counted_not_kept() {
    let mut findings = Findings::new(DAY);
    let junk = |i: usize| StrayKey {
        master: 0,
        name: format!("__redlock:junk{i}"),
        ttl: Ok(Ttl::Forever),
    };
    for i in 0..MAX_KEPT + 5 {
        findings.stray(&junk(i));
    }
    assert_eq!(findings.count, MAX_KEPT + 5);
    assert_eq!(findings.kept.len(), MAX_KEPT);
}

#[test]
fn quoting_for_the_shell_on_one_line() {
    assert_eq!(quote("it's"), r"'it'\''s'");
    assert_eq!(quote("a\nb"), r"'a\nb'");
}

#[test]
fn a_semaphores_keys_without_ttl_or_of_the_wrong_type() {
    let healthy_ttl = Some(Ttl::Left(Duration::from_secs(20)));
    let mut healthy = read(None);
    healthy.slots = Some(crate::lock::SlotsRead {
        limit: Some("2".into()),
        live: 1,
        ttl: healthy_ttl,
        limit_ttl: healthy_ttl,
        holders_ttl: healthy_ttl,
        ..Default::default()
    });
    let mut broken = healthy.clone();
    let slots = broken.slots.as_mut().unwrap();
    slots.limit_ttl = Some(Ttl::Forever);
    slots.holders_wrong_type = Some("string".into());
    let limit = crate::lock::keys::limit("k");
    let holders = crate::lock::keys::slot_holders("k");
    assert_eq!(
        kinds(&find(vec![healthy, broken], DAY)),
        [
            ("no_ttl", 1, limit.as_str()),
            ("malformed", 1, holders.as_str())
        ]
    );
}
