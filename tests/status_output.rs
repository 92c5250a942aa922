//! `status` and `-v` say what is known, in one style.

use crate::common;

use crate::common::{Cluster, describe};

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

/// Every line of `text` that shows Rust's debug notation for a value (`Lost(Unreachable)`,
/// `Bulk("...")`, `Some(...)`, `Nil`) rather than words.
fn debug_notation(text: &str) -> Vec<&str> {
    let words = [
        "Lost(",
        "Won",
        "Undecided",
        "Bulk(",
        "Int(",
        "Array(",
        "Simple(",
        "Nil",
        "Some(",
    ];
    text.lines()
        .filter(|line| words.iter().any(|w| line.contains(w)))
        .collect()
}

#[test]
fn the_per_master_trace_is_in_words() {
    let mut cluster = Cluster::start(3);
    cluster.servers[0].set("traced", "someone-else");
    cluster.servers[1].set("traced", "someone-else");
    cluster.server(2).kill();
    // Refused by two, the third down: lost, and each round is traced. The acquire round is
    // decided only once both refusals are in, so both answers are shown.
    let output = cluster
        .redlock()
        .args(["-vv", "run", "--key", "traced", "--wait", "0", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(75), "{}", describe(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("\"traced\": lost: refused after"),
        "{stderr}"
    );
    // Each master's answer, as redis-cli would show it.
    assert!(
        stderr.contains(r#"(integer) -1, "someone-else""#),
        "{stderr}"
    );
    assert_eq!(debug_notation(&stderr), Vec::<&str>::new(), "{stderr}");
}

/// Writes `count` live places into lock `key`'s queue on `server`, as waiters do.
fn queue_waiters(server: &common::Server, key: &str, count: usize) {
    let now = common::now_ms();
    let queue = format!("__redlock:{{{key}}}:queue:{key}");
    let lease = format!("__redlock:{{{key}}}:lease:{key}");
    let mut connection = server.connection();
    for first in (0..count).step_by(10_000) {
        let ids: Vec<(u64, String)> = (first..count.min(first + 10_000))
            .map(|i| (i as u64, format!("waiter-{i:06}")))
            .collect();
        let leases: Vec<(u64, &String)> = ids.iter().map(|(_, id)| (now + 60_000, id)).collect();
        let _: () = redis::cmd("ZADD")
            .arg(&queue)
            .arg(&ids)
            .query(&mut connection)
            .unwrap();
        let _: () = redis::cmd("ZADD")
            .arg(&lease)
            .arg(&leases)
            .query(&mut connection)
            .unwrap();
    }
    for name in [&queue, &lease] {
        let _: () = redis::cmd("PEXPIRE")
            .arg(name)
            .arg(60_000)
            .query(&mut connection)
            .unwrap();
    }
}

#[test]
fn status_says_how_many_wait_when_it_shows_only_the_first() {
    let cluster = Cluster::start(1);
    cluster.servers[0].set("crowded", "someone");
    queue_waiters(&cluster.servers[0], "crowded", 100_000);
    let output = cluster
        .redlock()
        .args(["status", "--key", "crowded"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", describe(&output));
    assert!(
        text.contains("queue, first come first served (100 shown of 100000 waiting):"),
        "{text}"
    );
    assert_eq!(text.matches("token waiter-").count(), 100, "{text}");
}

#[test]
fn a_count_of_one_is_singular_everywhere() {
    let mut cluster = Cluster::start(1);
    let servers = cluster.servers_env();
    let run = |args: &[&str]| {
        let output = common::redlock()
            .env("REDLOCK_SERVERS", &servers)
            .args(args)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!said.contains(" 1 masters"), "{args:?}: {said}");
        said
    };
    let said = run(&["-v", "run", "--key", "one", "--", "true"]);
    assert!(said.contains("1 of 1 master confirmed"), "{said}");
    let token = run(&["acquire", "--key", "one", "--ttl", "30s"]);
    let said = run(&["status", "--key", "one"]);
    assert!(said.contains("(1 of 1 master)"), "{said}");
    let said = run(&["list"]);
    assert!(said.contains("on 1 of 1 master ([1])"), "{said}");
    run(&["release", "--key", "one", "--token", token.trim()]);
    cluster.server(0).kill();
    let said = run(&["acquire", "--key", "one", "--ttl", "30s", "--wait", "0"]);
    assert!(said.contains("(need 1 master)"), "{said}");
}

/// An IPv6 master is named `redis://[::1]:PORT`, as it is written, in `config`, in `status`
/// and in the warning about a master that cannot be reached (it was `redis://::1:PORT`).
#[test]
fn an_ipv6_master_is_named_with_brackets() {
    let cluster = Cluster::start_with(2, &["--bind", "127.0.0.1", "::1"]);
    let v6: Vec<String> = cluster
        .servers
        .iter()
        .map(|s| s.url().replace("127.0.0.1", "[::1]"))
        .collect();
    // A third master where nothing listens.
    let gone = format!("redis://[::1]:{}", common::free_port());
    let mut redlock = common::redlock();
    redlock.env("REDLOCK_SERVERS", format!("{},{},{gone}", v6[0], v6[1]));
    let acquire = redlock
        .args(["acquire", "--key", "v6", "--ttl", "30s", "-vv"])
        .output()
        .unwrap();
    assert!(acquire.status.success(), "{}", describe(&acquire));
    let stderr = String::from_utf8_lossy(&acquire.stderr);
    assert!(
        stderr.contains(&format!("{} ->", v6[0])),
        "{}",
        describe(&acquire)
    );
    assert!(
        cluster.servers[0].pttl("v6") > 0,
        "the lock is not on [::1]"
    );
    // The one line of a failure names the master that failed.
    let failed = common::redlock()
        .args(["-s", &gone, "acquire", "--key", "v6", "--no-wait"])
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(69), "{}", describe(&failed));
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(
        stderr.contains(&format!("{gone} cannot connect")),
        "{}",
        describe(&failed)
    );

    let mut redlock = common::redlock();
    redlock.env("REDLOCK_SERVERS", format!("{},{},{gone}", v6[0], v6[1]));
    let status = redlock.args(["status", "--key", "v6"]).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    for url in v6.iter().chain([&gone]) {
        assert!(text.contains(url.as_str()), "{url}: {}", describe(&status));
    }
    assert!(!text.contains("redis://::1"), "{}", describe(&status));

    let mut redlock = common::redlock();
    redlock.env("REDLOCK_SERVERS", format!("{},{},{gone}", v6[0], v6[1]));
    let config = redlock.args(["config"]).output().unwrap();
    let text = String::from_utf8_lossy(&config.stdout);
    assert!(
        text.contains(&format!("  {}\n", v6[0])),
        "{}",
        describe(&config)
    );
}

/// Issue 33, item 8: a held lock whose fencing counter is not a number (a key of another type,
/// or text) is still held: `status` says so (exit 0) and names the counter as the problem,
/// with the fix. It said "unknown", exited 69 and told the user to choose another key.
#[test]
fn a_malformed_fencing_counter_is_the_counters_problem_not_the_locks() {
    let cluster = Cluster::start(3);
    let key = "bad-counter";
    let output = cluster
        .redlock()
        .args(["acquire", "--key", key, "--ttl", "60s"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let fence = redlock_cli::lock::keys::fence(key);
    for (i, server) in cluster.servers.iter().enumerate() {
        let mut write = if i == 2 {
            redis::cmd("SET")
        } else {
            redis::cmd("HSET")
        };
        write.arg(&fence);
        if i != 2 {
            write.arg("field");
        }
        let _: redis::Value = write
            .arg("not a number")
            .query(&mut server.connection())
            .unwrap();
    }
    let status = |json: bool| {
        let mut command = cluster.redlock();
        command.args(["status", "--key", key]);
        if json {
            command.arg("--json");
        }
        command.output().unwrap()
    };
    let output = status(false);
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.starts_with(&format!("lock {key:?} is held by")),
        "{text}"
    );
    let url = &cluster.servers[0].url();
    assert!(
        text.contains(&format!(
            "fencing counter on {url}: not a number (WRONGTYPE"
        )),
        "{text}"
    );
    assert!(
        text.contains("it holds text that is not a number"),
        "{text}"
    );
    assert!(text.contains(&format!("DEL '{fence}'")), "{text}");
    assert!(!text.contains("another key"), "{text}");
    let json: serde_json::Value = serde_json::from_slice(&status(true).stdout).unwrap();
    assert_eq!(json["verdict"], "held", "{json:#}");
    let error = json["masters"][0]["fence_error"]
        .as_str()
        .unwrap_or_default();
    assert!(error.starts_with("WRONGTYPE"), "{json:#}");
    assert_eq!(json["masters"][0]["held"], true, "{json:#}");
}
