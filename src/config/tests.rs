use super::*;
use crate::cli::{Cli, Command};
use clap::Parser;

fn run(args: &[&str]) -> Result<RunSettings, Failure> {
    let mut argv = vec!["redlock", "run"];
    argv.extend_from_slice(args);
    let Command::Run { args: run, .. } = Cli::try_parse_from(argv).unwrap().command else {
        panic!("not run")
    };
    run_settings(run, &Defaults::default())
}

#[test]
fn defaults_are_derived_from_the_ttl() {
    let s = run(&["--key", "k", "--ttl", "10s", "--", "true"]).unwrap();
    assert_eq!(s.lock.timing.node_timeout, Duration::from_millis(500));
    assert_eq!(s.lock.wait, Duration::ZERO);
    assert_eq!(s.supervise.kill_after, Duration::from_millis(2500));
    assert_eq!(s.supervise.renew_every, Duration::from_secs(10) / 3);
    assert_eq!(s.lock.conflict_exit_code, 75);
    let s = run(&["--key", "k", "--", "true"]).unwrap();
    assert_eq!(s.lock.timing.ttl, DEFAULT_TTL);
}

#[test]
fn rejects_values_that_make_no_sense() {
    // Past a year, a duration is refused as it is parsed.
    assert!(
        Cli::try_parse_from(["redlock", "run", "-k", "k", "-t", "100years", "--", "true"]).is_err()
    );
    let cases: &[&[&str]] = &[
        &["--key", "", "--", "true"],
        &["--key", "k", "--ttl", "0s", "--", "true"],
        &["--key", "k", "--ttl", "5ms", "--", "true"],
        &["--key", "k", "--ttl", "50ms", "--", "true"],
        &[
            "--key",
            "k",
            "--ttl",
            "1s",
            "--node-timeout",
            "600ms",
            "--",
            "true",
        ],
        &[
            "--key",
            "k",
            "--ttl",
            "1s",
            "--node-timeout",
            "0s",
            "--",
            "true",
        ],
        &[
            "--key",
            "k",
            "--ttl",
            "10s",
            "--kill-after",
            "6s",
            "--",
            "true",
        ],
        &["--key", "k", "--drift-factor", "0.7", "--", "true"],
        &["--key", "k", "--drift-factor", "NaN", "--", "true"],
        &["--key", "k", "--max-duration", "0s", "--", "true"],
        &["--key", "k", "--", ""],
    ];
    for args in cases {
        let failure = run(args).expect_err(&format!("{args:?} accepted"));
        assert_eq!(failure.code, exit::USAGE, "{args:?}");
        assert!(!failure.message.contains('\n'), "{}", failure.message);
    }
}

#[test]
fn duplicate_masters_are_a_configuration_error() {
    let flags = vec![
        "redis://localhost:7001".to_string(),
        "redis://127.0.0.1:7001/2".into(),
    ];
    let failure = masters(&flags).unwrap_err();
    assert_eq!(failure.code, exit::CONFIG);
    assert!(
        failure.message.contains("same master"),
        "{}",
        failure.message
    );
}

#[test]
fn bad_urls_are_a_configuration_error() {
    let failure = masters(&["localhost:6379".to_string()]).unwrap_err();
    assert_eq!(failure.code, exit::CONFIG);
}

#[test]
fn file_defaults_apply_below_flags() {
    let config: file::FileConfig =
        toml::from_str("ttl = \"2m\"\nnode_timeout = \"300ms\"\nkill_after = \"7s\"").unwrap();
    let defaults = defaults(&config, None).unwrap();
    assert_eq!(
        defaults.ttl,
        sourced(Duration::from_secs(120), Source::File)
    );
    let mut argv = vec!["redlock", "run", "--key", "k", "--", "true"];
    let Command::Run { args, .. } = Cli::try_parse_from(&argv).unwrap().command else {
        panic!()
    };
    let s = run_settings(args, &defaults).unwrap();
    assert_eq!(s.lock.timing.ttl, Duration::from_secs(120));
    assert_eq!(s.lock.timing.node_timeout, Duration::from_millis(300));
    assert_eq!(s.supervise.kill_after, Duration::from_secs(7));
    argv.splice(4..4, ["--ttl", "40s"]);
    let Command::Run { args, .. } = Cli::try_parse_from(&argv).unwrap().command else {
        panic!()
    };
    assert_eq!(
        run_settings(args, &defaults).unwrap().lock.timing.ttl,
        Duration::from_secs(40)
    );
}

#[test]
fn bad_file_values_are_configuration_errors() {
    let config: file::FileConfig = toml::from_str("ttl = \"soon\"").unwrap();
    assert_eq!(defaults(&config, None).unwrap_err().code, exit::CONFIG);
    assert!(toml::from_str::<file::FileConfig>("ttll = \"1s\"").is_err());
}

/// The scripts drop a slot or share scored past the longest TTL redlock gives (see
/// `lock::scripts`): every TTL the command line and the config file accept must be within it.
#[test]
fn the_longest_duration_is_the_longest_ttl_the_scripts_believe() {
    assert_eq!(
        crate::cli::LONGEST_DURATION.as_millis(),
        u128::from(crate::lock::scripts::LONGEST_TTL_MS)
    );
}
