//! Where settings come from: flag > environment > config file > default, with the config file
//! found at --config, $REDLOCK_CONFIG, or the user's location; and `redlock config` to see them.

use std::path::{Path, PathBuf};

use crate::common::{Cluster, describe, redlock};
use serde_json::Value;

fn write_config(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(&path, body).unwrap();
    path
}

fn servers_line(cluster: &Cluster) -> String {
    let urls: Vec<String> = cluster.urls().iter().map(|u| format!("{u:?}")).collect();
    format!("servers = [{}]\n", urls.join(", "))
}

fn show(cmd: &mut std::process::Command) -> Value {
    let output = cmd.args(["config", "--json"]).output().unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn servers_and_defaults_come_from_the_config_file() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &format!(
            "{}ttl = \"3s\"\nkill_after = \"1s\"\n",
            servers_line(&cluster)
        ),
    );
    let output = redlock()
        .args(["--config", config.to_str().unwrap()])
        .args([
            "run",
            "--key",
            "cfg",
            "--",
            "sh",
            "-c",
            "echo $REDLOCK_VALIDITY_MS",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let validity: u64 = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap();
    // The file's 3s, less the drift (1% + 2 ms) and the time the acquire took.
    assert!(
        validity <= 3000 - 32 && validity > 1500,
        "ttl from the file not used: {validity}"
    );

    let json = show(redlock().args(["--config", config.to_str().unwrap()]));
    assert_eq!(json["config_file"], config.to_str().unwrap());
    assert_eq!(json["servers"]["source"], "config file");
    assert_eq!(json["servers"]["urls"].as_array().unwrap().len(), 3);
    assert_eq!(json["ttl"]["value"], "3s");
    assert_eq!(json["ttl"]["source"], "config file");
    assert_eq!(json["kill_after"]["source"], "config file");
    assert_eq!(json["drift_factor"]["source"], "default");
}

/// A short default TTL from the file serves the whole workflow: `release` has no TTL to check,
/// and `extend` times a short TTL as `acquire` does (node timeout derived from it).
#[test]
fn a_short_ttl_in_the_config_file_works_for_acquire_extend_and_release() {
    let cluster = Cluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &format!("{}ttl = \"2s\"\n", servers_line(&cluster)),
    );
    let config = config.to_str().unwrap();
    let run = |args: &[&str]| {
        let output = redlock()
            .args(["--config", config])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {}", describe(&output));
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    };
    let token = run(&["acquire", "--key", "short"]);
    let pttl = cluster.servers[0].pttl("short");
    assert!(
        pttl > 1000 && pttl <= 2000,
        "the file's ttl not used: {pttl}"
    );
    run(&["extend", "--key", "short", "--token", &token]);
    run(&["extend", "--key", "short", "--token", &token, "--ttl", "1s"]);
    run(&["release", "--key", "short", "--token", &token]);
    assert!(cluster.key_gone_everywhere("short"));
}

#[test]
fn flags_beat_the_environment_which_beats_the_file() {
    let file_cluster = Cluster::start(1);
    let env_cluster = Cluster::start(1);
    let flag_cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &servers_line(&file_cluster));
    let config_flag = ["--config", config.to_str().unwrap()];

    let json = show(redlock().args(config_flag));
    assert_eq!(json["servers"]["urls"][0], file_cluster.urls()[0]);

    let json = show(
        redlock()
            .args(config_flag)
            .env("REDLOCK_SERVERS", env_cluster.servers_env()),
    );
    assert_eq!(json["servers"]["source"], "$REDLOCK_SERVERS");
    assert_eq!(json["servers"]["urls"][0], env_cluster.urls()[0]);

    let json = show(
        redlock()
            .args(config_flag)
            .args(["-s", &flag_cluster.urls()[0]])
            .env("REDLOCK_SERVERS", env_cluster.servers_env()),
    );
    assert_eq!(json["servers"]["source"], "--server");
    assert_eq!(json["servers"]["urls"][0], flag_cluster.urls()[0]);

    // And a lock really goes where the winning source says.
    let output = redlock()
        .args(config_flag)
        .args(["-s", &flag_cluster.urls()[0]])
        .args(["acquire", "--key", "where", "--ttl", "30s"])
        .env("REDLOCK_SERVERS", env_cluster.servers_env())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    assert!(flag_cluster.servers[0].get("where").is_some());
    assert!(env_cluster.key_gone_everywhere("where"));
    assert!(file_cluster.key_gone_everywhere("where"));

    // A --ttl flag beats the file's ttl.
    let with_ttl = write_config(
        dir.path(),
        &format!("{}ttl = \"9s\"\n", servers_line(&file_cluster)),
    );
    let output = redlock()
        .args(["--config", with_ttl.to_str().unwrap()])
        .args([
            "run",
            "--ttl",
            "4s",
            "--key",
            "t",
            "--",
            "sh",
            "-c",
            "echo $REDLOCK_VALIDITY_MS",
        ])
        .output()
        .unwrap();
    let validity: u64 = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap();
    assert!(validity < 4000, "{validity}");
}

#[test]
fn the_config_file_is_found_through_the_environment_and_the_users_location() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &servers_line(&cluster));
    let json = show(redlock().env("REDLOCK_CONFIG", &config));
    assert_eq!(json["config_file"], config.to_str().unwrap());

    // ~/.config/redlock/config.toml, with HOME pointing at a scratch directory.
    let home = tempfile::tempdir().unwrap();
    let user_dir = home.path().join(".config/redlock");
    std::fs::create_dir_all(&user_dir).unwrap();
    let user_config = write_config(&user_dir, &servers_line(&cluster));
    let json = show(
        redlock()
            .env("HOME", home.path())
            .env_remove("XDG_CONFIG_HOME"),
    );
    assert_eq!(json["config_file"], user_config.to_str().unwrap());
    assert_eq!(json["servers"]["urls"][0], cluster.urls()[0]);

    // $XDG_CONFIG_HOME wins over ~/.config.
    let xdg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(xdg.path().join("redlock")).unwrap();
    let xdg_config = write_config(&xdg.path().join("redlock"), "ttl = \"7s\"\n");
    let json = show(
        redlock()
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", xdg.path()),
    );
    assert_eq!(json["config_file"], xdg_config.to_str().unwrap());
    assert_eq!(json["ttl"]["value"], "7s");
}

#[test]
fn global_options_are_accepted_after_the_subcommand() {
    let cluster = Cluster::start(1);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &servers_line(&cluster));
    let output = redlock()
        .args([
            "run",
            "--config",
            config.to_str().unwrap(),
            "-v",
            "--key",
            "after",
        ])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("acquired"));
}

#[test]
fn a_broken_config_file_is_one_line_and_exit_78() {
    let dir = tempfile::tempdir().unwrap();
    for (body, expected) in [
        ("servers = [\"redis://a:1\"\nttl = ", "line"),
        ("ttll = \"1s\"\n", "unknown field"),
        ("ttl = \"soon\"\n", "ttl"),
        ("servers = []\n", "empty"),
        ("servers = [\"nope\"]\n", "invalid server URL"),
    ] {
        let config = write_config(dir.path(), body);
        let output = redlock()
            .args([
                "--config",
                config.to_str().unwrap(),
                "run",
                "--key",
                "k",
                "--",
                "true",
            ])
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(78),
            "{body:?}: {}",
            describe(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{body:?}: {stderr}");
        assert!(stderr.contains(expected), "{body:?}: {stderr}");
    }
}

/// A parse error is reported at its own line, also when it starts the line: an unknown or a
/// duplicate key was reported one line early (issue 33).
#[test]
fn a_broken_config_file_names_the_line_of_the_error() {
    let dir = tempfile::tempdir().unwrap();
    for (body, expected) in [
        (
            "# redlock\n\nbogus = 1\n",
            "at line 3: unknown field `bogus`",
        ),
        ("ttl = \"3s\"\n\nttl = \"4s\"\n", "at line 3: duplicate key"),
        (
            "ttl = \"3s\"\n[tls]\nca = \"x\"\n",
            "at line 3: unknown field `ca`",
        ),
        (
            "ttl = \"3s\"\n\nkill_after = 4\n",
            "at line 3: invalid type",
        ),
        ("bogus = 1\n", "at line 1: unknown field"),
    ] {
        let config = write_config(dir.path(), body);
        let output = redlock()
            .args(["--config", config.to_str().unwrap(), "config"])
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(78),
            "{body:?}: {}",
            describe(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{body:?}: {stderr}");
        assert!(stderr.contains(expected), "{body:?}: {stderr}");
    }
}

/// A value the config file got wrong is named with the file and the line to fix, whether it is
/// wrong on its own or only next to a flag.
#[test]
fn a_bad_value_in_the_config_file_names_the_file_and_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &str); 4] = [
        ("ttl = \"abc\"\n", &[], "line 3: `ttl`"),
        ("ttl = \"50ms\"\n", &[], "line 3: `ttl` 50ms is too short"),
        (
            "kill_after = \"1m\"\n",
            &["--ttl", "30s"],
            "line 3: `kill_after` 1m",
        ),
        (
            "servers = [\"redis://h:1\", \"localhost:6379\"]\n",
            &[],
            "line 3)",
        ),
    ];
    for (line, flags, expected) in cases {
        let config = write_config(
            dir.path(),
            &format!("# redlock\n\n{line}drift_factor = 0.01\n"),
        );
        let output = redlock()
            .args(["--config", config.to_str().unwrap()])
            .args(["run", "--key", "k"])
            .args(flags)
            .args(["--", "true"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(78),
            "{line}: {}",
            describe(&output)
        );
        assert!(
            stderr.contains(&format!("config file {}", config.display())),
            "{line}: {stderr}"
        );
        assert!(stderr.contains(expected), "{line}: {stderr}");
    }
}

/// `?db=N` names the database as `/N` does (issue 33): a host that writes
/// `redis://h:p?db=2` and one that writes `redis://h:p/2` contend for one lock, where redlock
/// used to take the first in database 0 and let both hold it. `config` shows the database.
#[test]
fn db_in_the_query_is_the_same_database_as_in_the_path() {
    let cluster = Cluster::start(3);
    let with = |suffix: &str| -> Vec<String> {
        cluster
            .urls()
            .iter()
            .flat_map(|u| ["-s".to_string(), format!("{u}{suffix}")])
            .collect()
    };
    let acquire = |suffix: &str| {
        redlock()
            .args(with(suffix))
            .args(["acquire", "--key", "db-q", "--ttl", "30s", "--no-wait"])
            .output()
            .unwrap()
    };
    let first = acquire("/2");
    assert!(first.status.success(), "{}", describe(&first));
    let second = acquire("?db=2");
    assert_eq!(second.status.code(), Some(75), "{}", describe(&second));
    // Written as both, the same number: the same database.
    let third = acquire("/2?db=2");
    assert_eq!(third.status.code(), Some(75), "{}", describe(&third));
    // On a majority at least (the last master may still be answering when `acquire` exits),
    // in database 2 and never in database 0.
    let in_db2 = |server: &crate::common::Server| {
        let mut connection = server.connection();
        let _: () = redis::cmd("SELECT").arg(2).query(&mut connection).unwrap();
        let held: Option<String> = redis::cmd("GET")
            .arg("db-q")
            .query(&mut connection)
            .unwrap();
        held.is_some()
    };
    let in_db2 = cluster.servers.iter().filter(|s| in_db2(s)).count();
    assert!(in_db2 >= 2, "the lock is in database 2 on {in_db2} of 3");
    assert!(cluster.servers.iter().all(|s| s.get("db-q").is_none()));

    let json = show(redlock().args(with("?db=2")));
    let shown: Vec<String> = cluster.urls().iter().map(|u| format!("{u}/2")).collect();
    assert_eq!(json["servers"]["urls"], serde_json::json!(shown));
}

/// A URL that names two databases, or carries a query parameter redlock does not read, is
/// refused with one line naming it, exit 78, and never its password.
#[test]
fn a_url_query_redlock_does_not_read_is_refused() {
    let cluster = Cluster::start(1);
    let url = &cluster.urls()[0];
    let with_login = url.replace("redis://", "redis://:S3cr3tPw@");
    for (given, names) in [
        (format!("{url}/2?db=3"), "two databases, /2 and ?db=3"),
        (format!("{url}?db=1&db=2"), "two databases, ?db=1 and ?db=2"),
        (format!("{url}?timeout=1"), "query parameter \"timeout\""),
        (
            format!("{url}?protocol=resp3"),
            "query parameter \"protocol\"",
        ),
        (
            format!("{with_login}?password=S3cr3tPw"),
            "query parameter \"password\"",
        ),
        (format!("{url}?S3cr3tPw"), "a query parameter"),
        (format!("{url}?db=two"), "?db= takes a database number"),
        (
            "rediss://localhost:1?db=2&verify=no".to_string(),
            "query parameter \"verify\"",
        ),
    ] {
        let output = redlock()
            .env("REDLOCK_SERVERS", &given)
            .args(["acquire", "--key", "db-bad", "--ttl", "30s"])
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(78),
            "{given}: {}",
            describe(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{given}: {}", describe(&output));
        assert!(
            stderr.starts_with("redlock: invalid server URL") && stderr.contains(names),
            "{given}: {}",
            describe(&output)
        );
        assert!(!stderr.contains("S3cr3tPw"), "{given}: {stderr}");
    }
    assert!(cluster.servers[0].keys().is_empty());
}
