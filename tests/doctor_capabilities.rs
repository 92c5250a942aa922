//! `doctor` tries what a lock needs (redlock's scripts on a scratch key, PUBLISH) instead of
//! trusting the configuration: masters that cannot take locks are errors, with the fix.

use serde_json::Value;

use crate::common::{Cluster, describe};

/// `doctor --json` on one master started with `args`: its exit code and its checks.
fn doctor(args: &[&str]) -> (Option<i32>, Value, Cluster) {
    let cluster = Cluster::start_with(1, args);
    let output = cluster
        .redlock()
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", describe(&output)));
    let checks = json["masters"][0]["checks"].clone();
    (output.status.code(), checks, cluster)
}

/// The check named `name` in `checks` (a master's, in doctor's JSON).
pub(crate) fn check<'a>(checks: &'a Value, name: &str) -> &'a Value {
    checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {checks:#}"))
}

#[test]
fn a_healthy_master_takes_and_releases_a_scratch_lock_and_leaves_nothing() {
    let (code, checks, cluster) = doctor(&[]);
    assert_eq!(check(&checks, "scripts")["level"], "ok", "{checks:#}");
    assert_eq!(check(&checks, "publish")["level"], "ok", "{checks:#}");
    assert_eq!(check(&checks, "subscribe")["level"], "ok", "{checks:#}");
    assert!(code == Some(0) || code == Some(1), "{code:?}");
    assert!(
        cluster.servers[0].keys().is_empty(),
        "doctor left keys behind"
    );
}

/// Each row: the master's setup, the check that must fail, its level, and words its message
/// must contain (the cause and the fix).
#[test]
fn masters_that_cannot_take_locks_are_named_with_the_fix() {
    let rows: [(&[&str], &str, &str, &[&str]); 6] = [
        (
            &[
                "--rename-command",
                "EVALSHA",
                "",
                "--rename-command",
                "EVAL",
                "",
            ],
            "scripts",
            "error",
            &["unknown command", "Lua scripts"],
        ),
        (
            &[
                "--user", "default", "on", "nopass", "~*", "&*", "+@all", "-eval", "-evalsha",
            ],
            "scripts",
            "error",
            &["NOPERM", "may not run EVAL"],
        ),
        (
            // The lock's scripts run; the readers' and the semaphore's need PEXPIREAT too.
            &[
                "--user",
                "default",
                "on",
                "nopass",
                "~*",
                "&*",
                "+@all",
                "-pexpireat",
            ],
            "scripts",
            "error",
            // Redis's words name no command, Valkey's do (issue 48): redlock names it on both.
            &["ACL user \"default\" may not run PEXPIREAT", "+pexpireat"],
        ),
        (
            &["--maxmemory", "1", "--maxmemory-policy", "noeviction"],
            "scripts",
            "error",
            &["OOM", "out of memory"],
        ),
        (
            &[
                "--user", "default", "on", "nopass", "~*", "&*", "+@all", "-publish",
            ],
            "publish",
            "warning",
            &["NOPERM", "polling"],
        ),
        (
            // No channel may be used: PUBLISH and SUBSCRIBE are both refused.
            &[
                "--user",
                "default",
                "on",
                "nopass",
                "~*",
                "resetchannels",
                "+@all",
            ],
            "subscribe",
            "warning",
            &["NOPERM", "polling"],
        ),
    ];
    for (args, name, level, words) in rows {
        let (code, checks, cluster) = doctor(args);
        // Whatever the master refused, the probe leaves no key without a TTL (issue 33: an
        // ACL without PEXPIREAT left the scratch lock's marker and its readers key forever).
        assert_eq!(cluster.keys_without_ttl(), Vec::<String>::new(), "{args:?}");
        let found = check(&checks, name);
        assert_eq!(found["level"], level, "{args:?}: {found:#}");
        let message = found["message"].as_str().unwrap();
        for word in words {
            assert!(
                message.contains(word),
                "{args:?}: {word:?} not in {message}"
            );
        }
        if level == "error" {
            assert_eq!(code, Some(1), "{args:?}");
        }
    }
}
