use super::*;

/// A master that passes every check.
pub(in super::super) fn healthy(server: &str, run_id: &str) -> Report {
    let info = [
        ("redis_version", "7.0.15"),
        ("run_id", run_id),
        ("role", "master"),
        ("maxmemory_policy", "noeviction"),
        ("aof_enabled", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    Report {
        server: server.into(),
        info,
        // What Redis 7.0.15 writes that tells it apart (see `server`).
        info_text: "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n".into(),
        appendfsync: Some("always".into()),
        clock_offset_ms: Some(0),
        ..Report::default()
    }
}

fn worst(findings: &[Finding]) -> Severity {
    findings.iter().map(|f| f.severity).max().unwrap()
}

#[test]
fn a_durable_master_is_all_ok() {
    assert_eq!(worst(&check_master(&healthy("a", "1"))), Severity::Ok);
    let three = [healthy("a", "1"), healthy("b", "2"), healthy("c", "3")];
    assert_eq!(worst(&check_cluster(&three)), Severity::Ok);
}

#[test]
fn a_master_that_cannot_run_the_scripts_is_an_error_and_no_publish_a_warning() {
    let find = |findings: &[Finding], check: &str| {
        findings.iter().find(|f| f.check == check).cloned().unwrap()
    };
    let mut refused = healthy("a", "1");
    refused.scripts_refused = Some(NodeError::Server(
        "NOPERM User default has no permissions to run the 'evalsha' command".into(),
    ));
    refused.publish_refused = Some(NodeError::Server("NOPERM ... 'publish' command".into()));
    let findings = check_master(&refused);
    let scripts = find(&findings, "scripts");
    assert_eq!(scripts.severity, Severity::Error);
    assert!(
        scripts.message.contains("may not run EVALSHA"),
        "{scripts:?}"
    );
    assert_eq!(find(&findings, "publish").severity, Severity::Warning);

    // A replica's scripts fail too (READONLY), but its role error says it once.
    let mut replica = refused.clone();
    replica.info.insert("role".into(), "slave".into());
    let findings = check_master(&replica);
    assert!(
        !findings.iter().any(|f| f.check == "scripts"),
        "{findings:?}"
    );
}

#[test]
fn a_cluster_before_7_0_is_told_it_has_no_sharded_pub_sub() {
    let mut old = healthy("a", "1");
    old.sharded = true;
    old.info.insert("redis_version".into(), "6.2.14".into());
    let findings = check_master(&old);
    let publish: Vec<_> = findings.iter().filter(|f| f.check == "publish").collect();
    assert_eq!(publish.len(), 1, "{findings:?}");
    assert_eq!(publish[0].severity, Severity::Warning);
    assert!(
        publish[0].message.contains("(this is 6.2.14)"),
        "{publish:?}"
    );
    assert!(!findings.iter().any(|f| f.check == "subscribe"));
    old.info.insert("redis_version".into(), "7.0.0".into());
    assert_eq!(worst(&check_master(&old)), Severity::Ok);
}

#[test]
fn replicas_old_versions_and_allkeys_eviction_are_errors() {
    let mut replica = healthy("a", "1");
    replica.info.insert("role".into(), "slave".into());
    assert_eq!(worst(&check_master(&replica)), Severity::Error);
    let mut old = healthy("a", "1");
    old.info.insert("redis_version".into(), "2.6.11".into());
    assert_eq!(worst(&check_master(&old)), Severity::Error);
    // Untested, not refused.
    old.info.insert("redis_version".into(), "5.0.6".into());
    assert_eq!(worst(&check_master(&old)), Severity::Warning);
    old.info.insert("redis_version".into(), "6.2.0".into());
    assert_eq!(worst(&check_master(&old)), Severity::Ok);
    let mut evicting = healthy("a", "1");
    evicting
        .info
        .insert("maxmemory_policy".into(), "allkeys-lru".into());
    assert_eq!(worst(&check_master(&evicting)), Severity::Error);
}

#[test]
fn weak_persistence_is_a_warning_that_explains_delayed_restart() {
    let mut no_aof = healthy("a", "1");
    no_aof.info.insert("aof_enabled".into(), "0".into());
    let findings = check_master(&no_aof);
    assert_eq!(worst(&findings), Severity::Warning);
    let message = &findings
        .iter()
        .find(|f| f.check == "persistence")
        .unwrap()
        .message;
    assert!(message.contains("delayed restart"), "{message}");
    let mut everysec = healthy("a", "1");
    everysec.appendfsync = Some("everysec".into());
    assert_eq!(worst(&check_master(&everysec)), Severity::Warning);
}

#[test]
fn the_same_server_twice_is_an_error_and_even_counts_a_warning() {
    let findings = check_cluster(&[healthy("a", "1"), healthy("b", "1"), healthy("c", "3")]);
    assert_eq!(worst(&findings), Severity::Error);
    let findings = check_cluster(&[healthy("a", "1"), healthy("b", "2")]);
    assert_eq!(worst(&findings), Severity::Warning);
}

#[test]
fn clock_skew_beyond_half_a_second_is_a_warning() {
    let mut late = healthy("b", "2");
    late.clock_offset_ms = Some(800);
    let findings = check_cluster(&[healthy("a", "1"), late, healthy("c", "3")]);
    assert!(
        findings
            .iter()
            .any(|f| f.check == "clock" && f.severity == Severity::Warning)
    );
}

#[test]
fn unreachable_is_an_error() {
    let report = Report {
        server: "a".into(),
        unreachable: Some("timed out".into()),
        ..Report::default()
    };
    assert_eq!(worst(&check_master(&report)), Severity::Error);
}

#[test]
fn a_server_that_cannot_hold_a_lock_alone_is_one_error_with_its_cause() {
    let errors = |report: &Report| -> Vec<Finding> {
        check_master(report)
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
            .collect()
    };
    // A KeyDB active replica: its role is no replica's, and its scripts are still tried.
    let mut keydb = healthy("a", "1");
    keydb.info.insert("role".into(), "active-replica".into());
    keydb.info_text = "# Server\r\nredis_version:6.3.4\r\n# Replication\r\n\
                       role:active-replica\r\nmaster_global_link_status:up\r\n"
        .into();
    let found = errors(&keydb);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].check, "server");
    assert!(check_master(&keydb).iter().any(|f| f.check == "scripts"));

    // No Lua engine: said once, by `server`, not again as a refused script.
    let mut valkey = healthy("a", "1");
    valkey.info_text = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\n\
                        valkey_version:9.1.2\r\n"
        .into();
    valkey.scripts_refused = Some(NodeError::Server(
        "ERR Could not find scripting engine 'lua'".into(),
    ));
    let found = errors(&valkey);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].message.contains("no Lua engine"), "{found:?}");
    assert!(!check_master(&valkey).iter().any(|f| f.check == "scripts"));

    // Another server's Redis version is a claim: not judged against Redis's.
    let mut kvrocks = healthy("a", "1");
    kvrocks.info.insert("redis_version".into(), "4.0.0".into());
    kvrocks.info_text = "kvrocks_version:2.10.1\r\nredis_version:4.0.0\r\n".into();
    let version = check_master(&kvrocks)
        .into_iter()
        .find(|f| f.check == "version")
        .unwrap();
    assert_eq!(version.severity, Severity::Ok);
    assert_eq!(version.message, "answers as Redis 4.0.0");
}
