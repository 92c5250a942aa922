//! The clap definitions checked as a whole, and the parsing the commands rely on.

use std::path::PathBuf;

use super::*;
use clap::CommandFactory;

#[test]
fn clap_definitions_are_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn subcommand_names_are_the_visible_subcommands() {
    let command = Cli::command();
    let visible: Vec<&str> = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .map(|sub| sub.get_name())
        .collect::<Vec<_>>();
    assert_eq!(visible, SUBCOMMANDS);
    // Every page has examples, and nothing else has any.
    let mut named: Vec<&str> = EXAMPLES.iter().map(|(name, _)| *name).collect();
    named.sort_unstable();
    let mut pages: Vec<&str> = SUBCOMMANDS.iter().copied().chain(["redlock"]).collect();
    pages.sort_unstable();
    assert_eq!(named, pages);
}

#[test]
fn durations() {
    assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
    assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
    assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
    assert!(parse_duration("30").unwrap_err().contains("add a unit"));
    assert!(parse_duration("-5s").unwrap_err().contains("negative"));
    assert!(parse_duration("30x").is_err());
    assert!(parse_duration("soon").is_err());
    assert_eq!(parse_wait("forever"), Ok(Duration::MAX));
    assert_eq!(parse_wait("10s"), Ok(Duration::from_secs(10)));
    assert!(parse_wait("soon").unwrap_err().contains("or forever"));
    assert!(parse_duration("99999999999999999999s").is_err());
}

#[test]
fn command_after_double_dash_keeps_its_flags() {
    let cli = Cli::try_parse_from([
        "redlock", "run", "--key", "k", "--", "ls", "-l", "--key", "x",
    ])
    .unwrap();
    let Command::Run { args: run, .. } = cli.command else {
        panic!("not run")
    };
    assert_eq!(run.command, ["ls", "-l", "--key", "x"]);
    assert_eq!(run.lock.key, "k");
}

#[test]
fn the_command_may_follow_without_double_dash_but_a_typo_is_an_error() {
    let cli = Cli::try_parse_from(["redlock", "run", "--key", "k", "ls", "-l"]).unwrap();
    let Command::Run { args: run, .. } = cli.command else {
        panic!("not run")
    };
    assert_eq!(run.command, ["ls", "-l"]);
    let error =
        Cli::try_parse_from(["redlock", "run", "--key", "k", "--bogus", "--", "true"]).unwrap_err();
    assert_eq!(error.kind(), clap::error::ErrorKind::UnknownArgument);
}

#[test]
fn global_options_work_after_the_subcommand() {
    let cli = Cli::try_parse_from([
        "redlock",
        "run",
        "-s",
        "redis://a:1",
        "-vv",
        "--key",
        "k",
        "--",
        "true",
    ])
    .unwrap();
    let (global, _) = cli.into_parts();
    assert_eq!(global.servers, ["redis://a:1"]);
    assert_eq!(global.verbose, 2);
}

/// Parses `args` as main does, placement check included.
fn parse(args: &[&str]) -> Result<(GlobalArgs, Command), clap::Error> {
    use clap::FromArgMatches;
    let mut command = Cli::command();
    let matches = command.try_get_matches_from_mut(args)?;
    check_placement(&mut command, &matches)?;
    Ok(Cli::from_arg_matches(&matches)?.into_parts())
}

#[test]
fn options_before_and_after_the_subcommand_are_merged() {
    let (global, _) = parse(&[
        "redlock",
        "-s",
        "redis://a:1",
        "-v",
        "--config",
        "before.toml",
        "--tls-cert",
        "c.pem",
        "--log-format",
        "json",
        "run",
        "-s",
        "redis://b:1",
        "-v",
        "-q",
        "--config",
        "after.toml",
        "--tls-key",
        "k.pem",
        "--key",
        "k",
        "--",
        "true",
    ])
    .unwrap();
    assert_eq!(global.servers, ["redis://a:1", "redis://b:1"]);
    assert_eq!(global.verbose, 2);
    assert!(global.quiet);
    assert_eq!(global.config, Some(PathBuf::from("after.toml")));
    assert_eq!(global.tls_cert, Some(PathBuf::from("c.pem")));
    assert_eq!(global.tls_key, Some(PathBuf::from("k.pem")));
    assert_eq!(global.log_format, LogFormat::Json);
    assert!(global.check().is_ok());

    let (global, _) = parse(&["redlock", "status", "--tls-cert", "c.pem", "-k", "k"]).unwrap();
    assert_eq!(global.check().unwrap_err().code, crate::exit::USAGE);
    assert_eq!(global.log_format, LogFormat::Text);
}

#[test]
fn options_are_refused_where_they_do_not_apply() {
    // Before the subcommand as after it.
    for args in [
        &["redlock", "-q", "doctor"][..],
        &["redlock", "doctor", "-q"],
        &["redlock", "-q", "config"],
        &["redlock", "-q", "release", "-k", "k", "--token", "t"],
        &["redlock", "-s", "redis://a:1", "completions", "bash"],
        &["redlock", "completions", "bash", "-s", "redis://a:1"],
        &["redlock", "-v", "man"],
        &["redlock", "--log-format", "json", "help"],
        &["redlock", "--tls-ca-cert", "ca.pem", "man", "run"],
    ] {
        assert!(parse(args).is_err(), "{args:?}");
    }
    for args in [
        &["redlock", "-q", "status", "-k", "k"][..],
        &["redlock", "-vv", "doctor"],
        &["redlock", "-s", "redis://a:1", "config"],
        &["redlock", "completions", "bash"],
        &["redlock", "man", "run"],
    ] {
        assert!(parse(args).is_ok(), "{args:?}");
    }
}
