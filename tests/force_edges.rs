//! `release --force` at its edges (issue 38, a review of src/lock/kinds/revoke.rs): the values
//! K holds that are nobody's token are never an inherited lock, and what `status` says while a
//! force holds only a minority.

use std::process::Output;

use crate::common::{Cluster, describe};

const CONFLICT: i32 = 75;

fn output(cluster: &Cluster, args: &[&str]) -> Output {
    cluster.redlock().args(args).output().unwrap()
}

fn acquired(cluster: &Cluster, args: &[&str]) -> String {
    let output = output(cluster, args);
    assert!(output.status.success(), "{}", describe(&output));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// A run under REDLOCK_KEY=K and REDLOCK_TOKEN=`marker` (copied from `status --json`'s
/// `token`, say) that tries once: it must not take K's marker for its own lock.
fn run_with_inherited(cluster: &Cluster, key: &str, marker: &str) -> Output {
    cluster
        .redlock()
        .env("REDLOCK_KEY", key)
        .env("REDLOCK_TOKEN", marker)
        .args(["run", "--key", key, "--wait", "0", "--", "echo", "inside"])
        .output()
        .unwrap()
}

/// Before the fix, both runs printed "inside" and exited 0: the revocation's marker (while
/// the revoked holder may still be inside) and the readers' marker (while readers hold) were
/// taken for a lock this process inherited.
#[test]
fn a_marker_in_redlock_token_is_no_inherited_lock() {
    let cluster = Cluster::start(3);
    acquired(&cluster, &["acquire", "--key", "revoked", "--ttl", "30s"]);
    let forced = output(&cluster, &["release", "--force", "--key", "revoked"]);
    assert_eq!(forced.status.code(), Some(0), "{}", describe(&forced));
    acquired(
        &cluster,
        &["acquire", "--key", "read", "--ttl", "30s", "--shared"],
    );
    for (key, marker) in [
        ("revoked", redlock_cli::lock::REVOKED_MARKER),
        ("read", redlock_cli::lock::SHARED_MARKER),
    ] {
        let output = run_with_inherited(&cluster, key, marker);
        assert_eq!(
            output.status.code(),
            Some(CONFLICT),
            "{}",
            describe(&output)
        );
        assert!(output.stdout.is_empty(), "{}", describe(&output));
    }
}
