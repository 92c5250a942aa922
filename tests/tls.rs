//! TLS (`rediss://`) and ACL users against real servers: certificates made by the test, a
//! server that requires client certificates, passwords from every source, and passwords never
//! shown.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::process::Output;
use std::time::Duration;

use crate::common::{Cluster, Inspector, Pki, Server, describe, eventually, redlock};

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Exit 78 (configuration to fix), with one line on stderr that contains `cause`.
fn assert_one_line_config_error(output: &Output, cause: &str) {
    assert_eq!(output.status.code(), Some(78), "{}", describe(output));
    let message = stderr(output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains(cause), "{message}");
}

fn tls_servers(pki: &Pki, n: usize, require_client_cert: bool) -> Vec<Server> {
    (0..n)
        .map(|_| Server::start_tls(pki, require_client_cert))
        .collect()
}

fn server_flags(servers: &[Server], url: fn(&Server) -> String) -> Vec<String> {
    servers
        .iter()
        .flat_map(|s| ["-s".to_string(), url(s)])
        .collect()
}

#[test]
fn rediss_with_the_right_ca_locks_and_releases() {
    let pki = Pki::generate();
    let servers = tls_servers(&pki, 3, false);
    let output = redlock()
        .args(server_flags(&servers, Server::tls_url))
        .args(["--tls-ca-cert", pki.ca.to_str().unwrap()])
        .args(["run", "--key", "tls", "--", "sh", "-c", "echo $REDLOCK_KEY"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "tls");
    // A release waits for a quorum and for its request to be on every master's wire: the
    // slowest master may run it a moment after redlock exits.
    for server in &servers {
        assert!(
            eventually(Duration::from_secs(5), || server.lock_keys().is_empty()),
            "lock left on {}",
            server.tls_url()
        );
    }
}

/// `valkeys://` is TLS exactly as `rediss://` is, and `valkey://` is `redis://` (issue 33:
/// `valkeys://` said TLS was "not enabled"); and `?db=N` on a TLS URL selects database N.
#[test]
fn valkey_schemes_and_a_database_in_the_query_of_a_tls_url() {
    let pki = Pki::generate();
    let servers = tls_servers(&pki, 3, false);
    let tls_port = |s: &Server| s.tls_url().rsplit(':').next().unwrap().to_string();
    let urls = [
        format!("valkeys://localhost:{}", tls_port(&servers[0])),
        format!("rediss://localhost:{}?db=2", tls_port(&servers[1])),
        servers[2].url().replace("redis://", "valkey://"),
    ];
    // Each as the only master, so that the lock is on it when `acquire` returns (with three,
    // the slowest master may be left to finish after redlock exits).
    for url in &urls {
        let output = redlock()
            .args(["-s", url, "--tls-ca-cert", pki.ca.to_str().unwrap()])
            .args(["acquire", "--key", "vk", "--ttl", "30s"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{url}: {}", describe(&output));
    }
    assert!(servers[0].get("vk").is_some(), "not locked over valkeys://");
    assert!(servers[2].get("vk").is_some(), "not locked over valkey://");
    assert_eq!(servers[1].get("vk"), None, "locked in database 0, not 2");
    let mut db2 = servers[1].connection();
    let _: () = redis::cmd("SELECT").arg(2).query(&mut db2).unwrap();
    let held: Option<String> = redis::cmd("GET").arg("vk").query(&mut db2).unwrap();
    assert!(held.is_some(), "not locked in database 2");

    let shown = redlock()
        .args(urls.iter().flat_map(|u| ["-s", u.as_str()]))
        .args(["config", "--json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(json["tls"]["used"], true, "{json}");
    let listed = &json["servers"]["urls"];
    assert_eq!(
        listed[0],
        urls[0].replace("valkeys://", "rediss://"),
        "{json}"
    );
    assert_eq!(listed[1], urls[1].replace("?db=2", "/2"), "{json}");
    assert_eq!(listed[2], servers[2].url(), "{json}");
}

#[test]
fn a_certificate_from_another_ca_is_refused() {
    let pki = Pki::generate();
    let stranger = Pki::generate();
    let servers = tls_servers(&pki, 1, false);
    let output = redlock()
        .args(server_flags(&servers, Server::tls_url))
        .args(["--tls-ca-cert", stranger.ca.to_str().unwrap()])
        .args(["run", "--key", "tls", "--", "true"])
        .output()
        .unwrap();
    // A certificate that does not verify is configuration to fix (78), not an outage.
    assert_one_line_config_error(&output, "TLS handshake failed");
    assert!(servers[0].lock_keys().is_empty());
}

/// A master whose certificate does not verify beside two plain ones that make the majority:
/// the lock is taken without it, and the refusal, which comes after the quorum decided (the
/// TLS handshake takes round trips more than the plain masters' answers), is still reported,
/// naming the master and the cause in words.
#[test]
fn a_master_refused_for_tls_is_reported_even_when_the_quorum_did_not_need_it() {
    let pki = Pki::generate();
    let stranger = Pki::generate();
    let plain = Cluster::start(2);
    let tls = Server::start_tls(&stranger, false);
    let mut cmd = redlock();
    cmd.args([
        "-s",
        &plain.urls()[0],
        "-s",
        &plain.urls()[1],
        "-s",
        &tls.tls_url(),
    ])
    .args(["--tls-ca-cert", pki.ca.to_str().unwrap()])
    .args(["run", "--key", "late"]);
    let mut run = common::Running::start(&mut cmd);
    run.wait_ready();
    assert!(
        run.wait_for_stderr("warning:", Duration::from_secs(30)),
        "no warning: {}",
        run.stderr_so_far()
    );
    run.open_gate();
    let output = run.wait_output();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.contains("warning: lock \"late\" was taken without 1 of the masters")
            && message.contains(&tls.tls_url())
            && message.contains("its certificate is not signed by a CA that redlock trusts"),
        "{message}"
    );
    assert!(
        !message.contains("UnknownIssuer") && !message.contains("BadSignature"),
        "{message}"
    );
    assert!(plain.key_gone_everywhere("late"));
}

#[test]
fn rediss_to_a_plaintext_port_says_so() {
    let pki = Pki::generate();
    let plaintext = Cluster::start(1);
    let port = plaintext.urls()[0].rsplit(':').next().unwrap().to_string();
    let output = redlock()
        .args(["-s", &format!("rediss://127.0.0.1:{port}")])
        .args(["--tls-ca-cert", pki.ca.to_str().unwrap()])
        .args(["run", "--ttl", "2s", "--key", "tls", "--", "true"])
        .output()
        .unwrap();
    assert_one_line_config_error(&output, "does this port serve TLS?");
}

#[test]
fn a_server_requiring_client_certificates_gets_one_from_tls_cert_and_key() {
    let pki = Pki::generate();
    let servers = tls_servers(&pki, 3, true);
    let base = || {
        let mut cmd = redlock();
        cmd.args(server_flags(&servers, Server::tls_url))
            .args(["--tls-ca-cert", pki.ca.to_str().unwrap()]);
        cmd
    };
    let without = base()
        .args(["run", "--key", "mtls", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(without.status.code(), Some(69), "{}", describe(&without));

    let with = base()
        .args(["--tls-cert", pki.client_cert.to_str().unwrap()])
        .args(["--tls-key", pki.client_key.to_str().unwrap()])
        .args(["run", "--key", "mtls", "--", "true"])
        .output()
        .unwrap();
    assert!(with.status.success(), "{}", describe(&with));
}

#[test]
fn tls_files_can_come_from_the_config_file() {
    let pki = Pki::generate();
    let servers = tls_servers(&pki, 3, true);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let urls: Vec<String> = servers
        .iter()
        .map(|s| format!("{:?}", s.tls_url()))
        .collect();
    std::fs::write(
        &config,
        format!(
            "servers = [{}]\n[tls]\nca_cert = {:?}\ncert = {:?}\nkey = {:?}\n",
            urls.join(", "),
            pki.ca,
            pki.client_cert,
            pki.client_key
        ),
    )
    .unwrap();
    let output = redlock()
        .args(["--config", config.to_str().unwrap()])
        .args(["run", "--key", "from-file", "--", "true"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
}

/// A server with an ACL user `locker` (password `s3cret`) and the default user disabled.
fn acl_server() -> Server {
    common::Cluster::start_with(
        1,
        &[
            "--user", "locker", "on", ">s3cret", "~*", "&*", "+@all", "--user", "default", "off",
        ],
    )
    .servers
    .pop()
    .unwrap()
}

/// How the credentials are given (the arguments before `run`, the environment), the exit code,
/// and what stderr must say (None: nothing at all).
type Login<'a> = (
    &'a str,
    Vec<&'a str>,
    Vec<(&'a str, &'a str)>,
    i32,
    Option<&'a str>,
);

#[test]
fn acl_user_with_password_from_file_env_or_url() {
    let server = acl_server();
    let url = format!("redis://locker@127.0.0.1:{}", server.port);
    let with_password = format!("redis://locker:s3cret@127.0.0.1:{}", server.port);
    let dir = tempfile::tempdir().unwrap();
    let password_file = dir.path().join("password");
    std::fs::write(&password_file, "s3cret\n").unwrap();
    std::fs::set_permissions(&password_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let password_file = password_file.to_str().unwrap();
    let without_credentials = server.url();

    let cases: [Login; 6] = [
        (
            "--password-file",
            vec!["-s", &url, "--password-file", password_file],
            vec![],
            0,
            None,
        ),
        (
            "$REDLOCK_PASSWORD_FILE",
            vec!["-s", &url],
            vec![("REDLOCK_PASSWORD_FILE", password_file)],
            0,
            None,
        ),
        (
            "$REDLOCK_PASSWORD",
            vec!["-s", &url],
            vec![("REDLOCK_PASSWORD", "s3cret")],
            0,
            None,
        ),
        (
            "a password in $REDLOCK_SERVERS",
            vec![],
            vec![("REDLOCK_SERVERS", &with_password)],
            0,
            None,
        ),
        // The default user is off: without credentials the master refuses, and says so; a
        // refused login is configuration to fix (78), not an unreachable master (69).
        (
            "no credentials",
            vec!["-s", &without_credentials],
            vec![],
            78,
            Some("NOAUTH"),
        ),
        // A wrong password is named as such, not as an unreachable server.
        (
            "a wrong password",
            vec!["-s", &url],
            vec![("REDLOCK_PASSWORD", "not-the-password")],
            78,
            Some("AUTH refused: WRONGPASS"),
        ),
    ];
    for (how, args, env, code, says) in cases {
        let output = redlock()
            .args(args)
            .args(["run", "--key", "acl", "--", "true"])
            .envs(env)
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(code),
            "{how}: {}",
            describe(&output)
        );
        match says {
            Some(text) => assert!(
                stderr(&output).contains(text),
                "{how}: {}",
                describe(&output)
            ),
            None => assert!(stderr(&output).is_empty(), "{how}: {}", describe(&output)),
        }
    }
}

#[test]
fn a_database_number_in_the_url_is_where_the_lock_lives() {
    let server = acl_server();
    let in_db = |db: u32| {
        Inspector::open(&format!(
            "redis://locker:s3cret@127.0.0.1:{}/{db}",
            server.port
        ))
        .unwrap()
    };
    let url = format!("redis://locker:s3cret@127.0.0.1:{}/3", server.port);
    let acquired = redlock()
        .args(["-s", &url, "acquire", "--key", "in-db-3", "--ttl", "30s"])
        .output()
        .unwrap();
    assert!(acquired.status.success(), "{}", describe(&acquired));
    let token = String::from_utf8(acquired.stdout)
        .unwrap()
        .trim()
        .to_string();
    let get = |db: u32| -> Option<String> {
        redis::cmd("GET")
            .arg("in-db-3")
            .query(&mut in_db(db))
            .unwrap()
    };
    assert_eq!(get(3).as_deref(), Some(token.as_str()));
    assert_eq!(get(0), None, "the lock must not land in database 0");

    let released = redlock()
        .args(["-s", &url, "release", "--key", "in-db-3", "--token", &token])
        .output()
        .unwrap();
    assert!(released.status.success(), "{}", describe(&released));
    assert_eq!(get(3), None);
}

#[test]
fn passwords_are_never_shown() {
    let server = acl_server();
    let secret = "wr0ng-but-secret";
    let url = format!("redis://locker:{secret}@127.0.0.1:{}", server.port);

    // A wrong password: the failure names the master, never the password.
    let output = redlock()
        .args(["run", "--key", "k", "--", "true"])
        .env("REDLOCK_SERVERS", &url)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(78), "{}", describe(&output));
    let all = format!(
        "{}{}",
        stderr(&output),
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(!all.contains(secret), "{all}");
    assert!(all.contains("redis://locker:***@127.0.0.1"), "{all}");

    // Resolved settings, status and doctor, text and JSON, -vv included.
    for args in [
        &["config"][..],
        &["config", "--json"],
        &["status", "--key", "k"],
        &["status", "--key", "k", "--json"],
        &["-vv", "doctor", "--json"],
        &["-vv", "run", "--key", "k", "--", "true"],
    ] {
        let output = redlock()
            .args(args)
            .env("REDLOCK_SERVERS", &url)
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            stderr(&output),
            String::from_utf8_lossy(&output.stdout)
        );
        assert!(!all.contains(secret), "{args:?} showed the password: {all}");
        // Each of them names the master, so the URL was printed, redacted.
        assert!(
            all.contains("locker:***@127.0.0.1"),
            "{args:?} did not name the master: {all}"
        );
    }

    // A malformed URL: the error shows it redacted.
    let output = redlock()
        .args(["run", "--key", "k", "--", "true"])
        .env(
            "REDLOCK_SERVERS",
            format!("redis://locker:{secret}@host:99999"),
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(78), "{}", describe(&output));
    assert!(!stderr(&output).contains(secret), "{}", describe(&output));
}

#[test]
fn exposed_secrets_are_warned_about() {
    let server = acl_server();
    let dir = tempfile::tempdir().unwrap();
    let with_password = format!("redis://locker:s3cret@127.0.0.1:{}", server.port);
    let without_password = format!("redis://locker@127.0.0.1:{}", server.port);
    let file = |name: &str, content: &str, mode: u32| {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path.to_str().unwrap().to_string()
    };
    let readable_password_file = file("password", "s3cret\n", 0o644);
    let config = format!("servers = [{with_password:?}]\n");
    let readable_config = file("readable.toml", &config, 0o644);
    let private_config = file("private.toml", &config, 0o600);

    // What exposes a secret (the arguments before `run`), and what the warning must say; none
    // at all when nothing is exposed. The lock is taken either way.
    let cases: [(&str, Vec<&str>, &[&str]); 4] = [
        (
            "a password on the command line is visible in `ps`",
            vec!["-s", &with_password],
            &["visible to other users"],
        ),
        (
            "a password file others can read",
            vec![
                "-s",
                &without_password,
                "--password-file",
                &readable_password_file,
            ],
            &["chmod 600"],
        ),
        (
            "a config file others can read that holds a password",
            vec!["--config", &readable_config],
            &["config file", "chmod 600"],
        ),
        (
            "the same config file, private",
            vec!["--config", &private_config],
            &[],
        ),
    ];
    for (what, args, warning) in cases {
        let output = redlock()
            .args(args)
            .args(["run", "--key", "w", "--", "true"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{what}: {}", describe(&output));
        let message = stderr(&output);
        if warning.is_empty() {
            assert!(message.is_empty(), "{what}: {}", describe(&output));
        }
        for text in warning {
            assert!(message.contains(text), "{what}: {}", describe(&output));
        }
    }
}
