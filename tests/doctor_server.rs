//! `doctor` names the server each master is, against the real server the suite runs (Redis by
//! default, Valkey where `REDLOCK_TEST_REDIS_SERVER` names a valkey-server): each test reads
//! from the server's own INFO which server it started, and expects doctor to say the same.
//! The other servers (KeyDB, Dragonfly, Garnet, Kvrocks) are recognised from their INFO
//! fields in the unit tests of `src/commands/doctor/server.rs`; none of them runs here.

use serde_json::Value;

use crate::common::{Server, describe};

/// The server the test's master runs, read from its own INFO: ("Valkey", "9.1.2") where it
/// calls itself valkey (server_name, valkey_version), else ("Redis", redis_version).
fn started(server: &Server) -> (&'static str, String, (u32, u32)) {
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut server.connection())
        .expect("INFO server");
    let field = |name: &str| {
        info.lines()
            .find_map(|line| line.trim_end().strip_prefix(&format!("{name}:")))
            .map(str::to_string)
    };
    let (name, version) = match field("server_name").as_deref() {
        Some("valkey") => ("Valkey", field("valkey_version")),
        other => {
            assert_eq!(other, None, "a server this suite does not start: {info}");
            ("Redis", field("redis_version"))
        }
    };
    let version = version.unwrap_or_else(|| panic!("no version in {info}"));
    let mut numbers = version.split('.').map(|n| n.parse::<u32>().unwrap_or(0));
    let major_minor = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    (name, version, major_minor)
}

/// `redlock doctor` on one master: its exit code, its JSON entry, and the text report.
fn doctor(server: &Server) -> (Option<i32>, Value, String) {
    let run = |json: bool| {
        let mut cmd = crate::common::redlock();
        cmd.args(["-s", &server.url(), "doctor", "--node-timeout", "5s"]);
        if json {
            cmd.arg("--json");
        }
        cmd.output().expect("run redlock doctor")
    };
    let output = run(true);
    let json: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", describe(&output)));
    let text = run(false);
    assert_eq!(
        text.status.code(),
        output.status.code(),
        "{}",
        describe(&text)
    );
    (
        output.status.code(),
        json["masters"][0].clone(),
        String::from_utf8_lossy(&text.stdout).into_owned(),
    )
}

fn check<'a>(entry: &'a Value, name: &str) -> &'a Value {
    crate::doctor_capabilities::check(&entry["checks"], name)
}

#[test]
fn doctor_names_the_server_it_talks_to_and_its_version() {
    let server = Server::start_inner(&[], None);
    let (name, version, _) = started(&server);
    let (_, entry, text) = doctor(&server);
    assert_eq!(entry["server_name"], name, "{entry:#}");
    assert_eq!(entry["server_version"], version.as_str(), "{entry:#}");
    let found = check(&entry, "server");
    // Redis, and the Valkey versions this suite runs (8 and later), are tested: ok.
    assert_eq!(found["level"], "ok", "{entry:#}");
    let message = found["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("{name} {version}")),
        "{message}"
    );
    if name == "Valkey" {
        assert!(message.contains("(answers as Redis 7.2"), "{message}");
    }
    // The text report says it on the master's own line.
    assert!(
        text.lines()
            .any(|line| line.trim_start() == format!("ok       {message}")),
        "{text}"
    );
}

/// Valkey 9.1 runs Lua as a module: unloaded, every lock fails, and doctor says why, once.
/// Redis (and Valkey before 9.1) has Lua built in and lists no lua module: there the same
/// INFO section must not be taken for a missing engine.
#[test]
fn a_server_without_its_lua_engine_is_an_error_and_one_with_it_built_in_is_not() {
    let first = Server::start_inner(&[], None);
    let (name, _, version) = started(&first);
    if name == "Valkey" && version >= (9, 1) {
        drop(first);
        let server = Server::start_inner(&["--enable-module-command", "yes"], None);
        let _: () = redis::cmd("MODULE")
            .arg("UNLOAD")
            .arg("lua")
            .query(&mut server.connection())
            .expect("MODULE UNLOAD lua");
        let (code, entry, text) = doctor(&server);
        assert_eq!(code, Some(1), "{text}");
        let found = check(&entry, "server");
        assert_eq!(found["level"], "error", "{entry:#}");
        let message = found["message"].as_str().unwrap();
        assert!(
            message.contains("no Lua engine (INFO modules lists no lua module)"),
            "{message}"
        );
        // Said once: not again as a refused script.
        let errors: Vec<&Value> = entry["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["level"] == "error")
            .collect();
        assert_eq!(errors.len(), 1, "{entry:#}");
        assert!(text.contains(&format!("error    {message}")), "{text}");
    } else {
        let modules: String = redis::cmd("INFO")
            .arg("modules")
            .query(&mut first.connection())
            .expect("INFO modules");
        assert!(!modules.contains("name=lua"), "{modules}");
        let (_, entry, _) = doctor(&first);
        assert_eq!(check(&entry, "server")["level"], "ok", "{entry:#}");
        assert_eq!(check(&entry, "scripts")["level"], "ok", "{entry:#}");
    }
}
