//! The holder's note: `--note TEXT` (or `$REDLOCK_NOTE`, which clap reads for it), else, in a
//! CI job, the job's URL, so that every CI holder says which job it is without configuration.
//! An explicit note wins over the automatic one, and an empty one turns it off.
//!
//! Each CI's variables, as its documentation names them:
//! - GitHub Actions ("Variables reference", docs.github.com/en/actions/reference/
//!   variables-reference): `GITHUB_ACTIONS` is `true`; `GITHUB_SERVER_URL` (the server, e.g.
//!   https://github.com), `GITHUB_REPOSITORY` (owner/name) and `GITHUB_RUN_ID` make the run's
//!   page, `$GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID`. The attempt
//!   (`GITHUB_RUN_ATTEMPT`) is left out: a web address for one attempt is not documented, and
//!   the run's page shows the latest.
//! - GitLab CI ("Predefined CI/CD variables reference", docs.gitlab.com/ci/variables/
//!   predefined_variables): `GITLAB_CI` is `true`; `CI_JOB_URL` is the job's URL.
//! - Jenkins (the list every controller serves at `$JENKINS_URL/env-vars.html`, and
//!   CloudBees' "Work with the environment"): `JENKINS_URL` is the controller's URL,
//!   `BUILD_URL` the build's, "like http://server:port/jenkins/job/foo/15/" (both only when
//!   the controller's URL is configured).
//! - Buildkite ("Environment variables", buildkite.com/docs/pipelines/configure/
//!   environment-variables): `BUILDKITE` is `true`; `BUILDKITE_BUILD_URL` is the build's URL.
//!   No documented address names one job of a build, so the note names the build.
//!
//! A CI's variables are not redlock's: one that is missing, empty or not text gives no
//! automatic note rather than a failure, and an automatic note over [`MAX_NOTE`] bytes is cut
//! (a job never fails for its own URL).

use crate::exit::Failure;
use crate::lock::{MAX_NOTE, cut_bytes};

/// The note in a holder record, and where it came from (for -v).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub text: String,
    pub from: &'static str,
}

/// The note from `--note` (or `$REDLOCK_NOTE`), else from the CI job this runs in, if any;
/// `read` reads an environment variable (the process's own outside tests).
pub fn resolve(
    flag: Option<&str>,
    read: impl Fn(&str) -> Option<String>,
) -> Result<Option<Note>, Failure> {
    match flag {
        Some("") => Ok(None),
        Some(text) if text.len() > MAX_NOTE => Err(Failure::usage(format!(
            "--note (or $REDLOCK_NOTE) is {} bytes long: a note holds at most {MAX_NOTE} bytes \
             (a CI job's URL and a few words); shorten it",
            text.len()
        ))),
        Some(text) => Ok(Some(Note {
            text: text.to_string(),
            from: "--note or $REDLOCK_NOTE",
        })),
        None => Ok(from_ci(read)),
    }
}

/// The URL of the CI job this runs in, if a CI that redlock knows says so.
fn from_ci(read: impl Fn(&str) -> Option<String>) -> Option<Note> {
    let var = |name: &str| read(name).filter(|value| !value.is_empty());
    let is_true = |name: &str| var(name).as_deref() == Some("true");
    let (text, from) = if is_true("GITHUB_ACTIONS") {
        let url = format!(
            "{}/{}/actions/runs/{}",
            var("GITHUB_SERVER_URL")?.trim_end_matches('/'),
            var("GITHUB_REPOSITORY")?,
            var("GITHUB_RUN_ID")?
        );
        (
            url,
            "GitHub Actions ($GITHUB_SERVER_URL, $GITHUB_REPOSITORY, $GITHUB_RUN_ID)",
        )
    } else if is_true("GITLAB_CI") {
        (var("CI_JOB_URL")?, "GitLab CI ($CI_JOB_URL)")
    } else if var("JENKINS_URL").is_some() {
        (var("BUILD_URL")?, "Jenkins ($BUILD_URL)")
    } else if is_true("BUILDKITE") {
        (
            var("BUILDKITE_BUILD_URL")?,
            "Buildkite ($BUILDKITE_BUILD_URL)",
        )
    } else {
        return None;
    };
    Some(Note {
        text: cut_bytes(text, MAX_NOTE),
        from,
    })
}

/// A variable of the process's environment, if it is set to text.
pub fn from_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn text(flag: Option<&str>, vars: &[(&str, &str)]) -> Option<String> {
        resolve(flag, env(vars)).unwrap().map(|n| n.text)
    }

    const GITHUB: &[(&str, &str)] = &[
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_SERVER_URL", "https://github.com"),
        ("GITHUB_REPOSITORY", "acme/shop"),
        ("GITHUB_RUN_ID", "1658821493"),
        ("GITHUB_RUN_ATTEMPT", "2"),
    ];

    #[test]
    fn each_ci_names_its_job() {
        let jobs: [(&[(&str, &str)], &str); 4] = [
            (
                GITHUB,
                "https://github.com/acme/shop/actions/runs/1658821493",
            ),
            (
                &[
                    ("GITLAB_CI", "true"),
                    ("CI_JOB_URL", "https://gl.example/g/p/-/jobs/42"),
                ],
                "https://gl.example/g/p/-/jobs/42",
            ),
            (
                &[
                    ("JENKINS_URL", "https://ci.example/"),
                    ("BUILD_URL", "https://ci.example/job/d/15/"),
                ],
                "https://ci.example/job/d/15/",
            ),
            (
                &[
                    ("BUILDKITE", "true"),
                    ("BUILDKITE_BUILD_URL", "https://buildkite.com/a/s/builds/1"),
                ],
                "https://buildkite.com/a/s/builds/1",
            ),
        ];
        for (vars, url) in jobs {
            assert_eq!(text(None, vars).as_deref(), Some(url), "{vars:?}");
        }
    }

    #[test]
    fn outside_ci_or_with_a_variable_missing_there_is_no_note() {
        assert_eq!(text(None, &[]), None);
        assert_eq!(text(None, &GITHUB[1..]), None, "not GitHub Actions");
        assert_eq!(text(None, &GITHUB[..3]), None, "no run id");
        assert_eq!(
            text(None, &[("GITLAB_CI", "true"), ("CI_JOB_URL", "")]),
            None
        );
        // A BUILD_URL alone is any tool's variable, not Jenkins'.
        assert_eq!(text(None, &[("BUILD_URL", "https://x/1/")]), None);
    }

    #[test]
    fn an_explicit_note_wins_and_an_empty_one_turns_the_automatic_one_off() {
        assert_eq!(text(Some("INC-7"), GITHUB).as_deref(), Some("INC-7"));
        assert_eq!(text(Some(""), GITHUB), None);
    }

    #[test]
    fn the_help_says_the_limit() {
        use clap::CommandFactory;
        let mut command = crate::cli::Cli::command();
        command.build();
        for sub in ["run", "acquire"] {
            let note = command
                .find_subcommand(sub)
                .and_then(|c| c.get_arguments().find(|a| a.get_id() == "note"))
                .unwrap_or_else(|| panic!("{sub} --note"));
            let help = note.get_help().unwrap().to_string();
            assert!(
                help.contains(&format!("At most {MAX_NOTE} bytes")),
                "{help}"
            );
            assert_eq!(note.get_env(), Some(std::ffi::OsStr::new("REDLOCK_NOTE")));
        }
    }

    #[test]
    fn a_long_note_is_refused_and_a_long_url_cut() {
        let at_most = "é".repeat(MAX_NOTE / 2);
        assert_eq!(text(Some(&at_most), &[]), Some(at_most));
        let failure = resolve(Some(&"x".repeat(MAX_NOTE + 1)), env(&[])).unwrap_err();
        assert_eq!(failure.code, crate::exit::USAGE);
        assert!(
            failure.message.contains("at most 256 bytes"),
            "{}",
            failure.message
        );
        let long = format!("https://gitlab.example.com/{}", "é".repeat(200));
        let cut = text(None, &[("GITLAB_CI", "true"), ("CI_JOB_URL", &long)]).unwrap();
        assert!(cut.len() <= MAX_NOTE && cut.ends_with('…'), "{cut}");
        assert!(long.starts_with(cut.trim_end_matches('…')));
    }
}
