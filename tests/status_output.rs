//! `status` and `-v` say what is known, in one style.

mod common;

use common::{Cluster, describe};

#[test]
fn status_cuts_only_what_is_long_and_counts_the_unreachable() {
    let mut cluster = Cluster::start(3);
    for server in &cluster.servers {
        let _: () = redis::cmd("SET")
            .arg("short")
            .arg("zzz")
            .arg("PX")
            .arg(2_500)
            .query(&mut server.connection())
            .unwrap();
    }
    let output = cluster
        .redlock()
        .args(["status", "--key", "short"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", describe(&output));
    assert!(text.contains("token zzz\n"), "{text}");
    assert!(!text.contains('…'), "{text}");
    // One style for durations: whole seconds, no "2s 487ms".
    assert!(!text.contains("ms"), "{text}");

    cluster.server(1).kill();
    cluster.server(2).kill();
    let output = cluster
        .redlock()
        .args(["status", "--key", "short"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("too many masters are unreachable (2 of 3)"),
        "{text}"
    );
}

#[test]
fn verbose_acquire_says_how_many_confirmed_so_far() {
    let cluster = Cluster::start(3);
    let output = cluster
        .redlock()
        .args(["-v", "run", "--key", "told", "--", "true"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("acquired \"told\""))
        .unwrap_or_else(|| panic!("{stderr}"));
    // Either all three answered in time, or the round stopped at quorum and says so.
    assert!(
        line.ends_with("3 of 3 masters confirmed")
            || line.ends_with("2 of 3 masters confirmed so far"),
        "{line}"
    );
}

#[test]
fn status_quiet_answers_with_the_exit_code_alone() {
    let cluster = Cluster::start(1);
    let free = cluster
        .redlock()
        .args(["status", "-q", "--key", "nobody"])
        .output()
        .unwrap();
    assert_eq!(free.status.code(), Some(1), "{}", describe(&free));
    assert!(
        free.stdout.is_empty() && free.stderr.is_empty(),
        "{}",
        describe(&free)
    );
    cluster.servers[0].set("held", "someone");
    let held = cluster
        .redlock()
        .args(["status", "--key", "held", "-q"])
        .output()
        .unwrap();
    assert_eq!(held.status.code(), Some(0), "{}", describe(&held));
    assert!(held.stdout.is_empty(), "{}", describe(&held));
}
