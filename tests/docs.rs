//! What the manual (README.md, the front page, and the pages of docs/), the man pages and
//! `--help` promise, where a user looks for it; and that the manual holds together: every link
//! leads somewhere, the front page stays short, its examples are those of `--help`.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use crate::common::manual::{self, Page};
use redlock_cli::cli;

/// The front page says what redlock is, how to install it and one example per command; the
/// rest is in docs/.
const FRONT_PAGE_MAX_LINES: usize = 300;

/// `text` with its line breaks (and a man page's hyphen escapes) undone, so that a phrase
/// wrapped over two lines is still found.
fn flat(text: &str) -> String {
    text.replace("\\-", "-")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_limit_range_is_documented_with_limit() {
    let semaphore = manual::page("docs/semaphore.md");
    let section = flat(semaphore.section("At most L at once: `--limit`"));
    assert!(
        section.contains("L is a whole number from 1 to 1000"),
        "{section}"
    );
    for command in ["run", "acquire"] {
        let output = common::redlock()
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = flat(&String::from_utf8_lossy(&output.stdout));
        let limit = &help[help.find("--limit").expect("--limit in help")..];
        assert!(
            limit.contains("L is 1 to 1000"),
            "{command} --help: {limit}"
        );
        let page = std::fs::read_to_string(format!(
            "{}/man/redlock-{command}.1",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert!(
            flat(&page).contains("L is 1 to 1000"),
            "man redlock-{command}"
        );
    }
    // What the range refuses says so.
    let output = common::redlock()
        .args(["run", "--key", "k", "--limit", "1001", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&output.stderr).contains("1..=1000"));
}

#[test]
fn the_durability_advice_covers_fencing_counters() {
    let page = manual::page("docs/guarantees-and-limits.md");
    let limits = flat(page.section("Limits: what Redlock does not promise"));
    let advice = &limits[limits
        .find("A delayed restart does not protect fencing counters")
        .expect("the Limits say what a delayed restart does not protect")..];
    // Why: counters have no TTL, so no delay brings them back.
    assert!(advice.contains("has no TTL"), "{advice}");
    assert!(advice.contains("tokens start again from 1"), "{advice}");
    // What to do instead: persistence, and a resource that remembers.
    assert!(advice.contains("`appendfsync always`"), "{advice}");
    assert!(
        advice.contains("remember the highest token it has seen"),
        "{advice}"
    );
}

#[test]
fn the_front_page_is_short() {
    let lines = manual::page("README.md").text.lines().count();
    assert!(
        lines <= FRONT_PAGE_MAX_LINES,
        "README.md has {lines} lines, more than {FRONT_PAGE_MAX_LINES}: move a subject to docs/"
    );
}

/// A heading's anchor as GitHub makes it: lower case, every character but letters, digits,
/// `_`, `-` and spaces dropped, each space a `-`.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings; a repeated one gets `-1`, `-2`... as on GitHub.
fn anchors(page: &Page) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    for (_, line) in manual::prose_lines(&page.text) {
        if let Some((_, title)) = manual::heading_of(line) {
            let base = slug(title);
            let mut anchor = base.clone();
            let mut n = 0;
            while anchors.contains(&anchor) {
                n += 1;
                anchor = format!("{base}-{n}");
            }
            anchors.insert(anchor);
        }
    }
    anchors
}

/// `line` with the text of its code spans left out (a link is never inside one).
fn without_code_spans(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join("``")
}

/// The targets of the inline links (`[text](target)`) of a page, outside code, with their
/// line numbers.
fn link_targets(page: &Page) -> Vec<(usize, String)> {
    let mut targets = Vec::new();
    for (number, line) in manual::prose_lines(&page.text) {
        let line = without_code_spans(line);
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            let end = rest.find(')').unwrap_or_else(|| {
                panic!("{}:{number}: a link without its `)`", page.path.display())
            });
            targets.push((number, rest[..end].to_string()));
        }
    }
    targets
}

/// `path` with its `.` and `..` resolved, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => assert!(out.pop(), "{} leaves the repository", path.display()),
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn every_link_in_the_manual_leads_to_a_file_and_heading_that_exist() {
    let pages = manual::pages();
    assert!(pages.len() > 1, "docs/ has no pages");
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        for (number, target) in link_targets(page) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if file.is_empty() {
                page.path.clone()
            } else {
                normalize(&page.path.parent().unwrap().join(file))
            };
            let at = format!("{}:{number}: {target}", page.path.display());
            if !manual::root().join(&linked).exists() {
                broken.push(format!("{at}: no file {}", linked.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let linked_page = manual::page(&linked);
                let anchors = anchors(&linked_page);
                if !anchors.contains(anchor) {
                    broken.push(format!(
                        "{at}: no heading with anchor #{anchor} in {}; its anchors: {anchors:?}",
                        linked.display()
                    ));
                }
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: is the parser right?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_index_links_every_page_of_docs() {
    let index = manual::page("docs/README.md");
    let linked: BTreeSet<String> = link_targets(&index)
        .into_iter()
        .map(|(_, target)| target.split('#').next().unwrap().to_string())
        .collect();
    for page in manual::pages() {
        let Ok(name) = page.path.strip_prefix("docs") else {
            continue;
        };
        let name = name.to_str().unwrap();
        assert!(
            name == "README.md" || linked.contains(name),
            "docs/README.md does not link docs/{name}"
        );
    }
}

/// The command at the start of `line` once a shell assignment `NAME=$(` is skipped, if it is
/// `redlock SUBCOMMAND ...`: the subcommand.
fn subcommand_of(line: &str) -> Option<&str> {
    let command = match line.split_once("=$(") {
        Some((name, rest)) if !name.contains(' ') => rest,
        _ => line,
    };
    let mut words = command.split_whitespace();
    (words.next()? == "redlock").then_some(())?;
    words.next()
}

/// The front page's examples, one per command, are examples of that command's `--help` and
/// man page (src/cli/examples.rs), which tests/generated.rs keeps in step with them.
#[test]
fn the_front_page_shows_an_example_of_every_command_from_its_help() {
    let readme = manual::page("README.md");
    let section = readme.section("Commands");
    let mut shown = BTreeSet::new();
    for (language, lines) in manual::code_blocks(section) {
        if language != "sh" {
            continue;
        }
        for line in lines {
            let Some(subcommand) = subcommand_of(line) else {
                continue;
            };
            assert!(
                cli::examples(subcommand).contains(&line),
                "README's example {line:?} is not among `redlock {subcommand} --help`'s: {:?}",
                cli::examples(subcommand)
            );
            shown.insert(subcommand);
        }
    }
    for subcommand in cli::SUBCOMMANDS {
        assert!(
            shown.contains(subcommand),
            "README's \"Commands\" shows no example of `redlock {subcommand}`"
        );
    }
}

/// Where the Debian package installs the binary, from scripts/deb's file list (the line that
/// puts `"$binary"` into its directory).
fn packaged_binary() -> String {
    let script = std::fs::read_to_string(manual::root().join("scripts/deb")).unwrap();
    let directory = script
        .lines()
        .find_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["put_into", _, directory, "\"$binary\""] => Some(directory.to_string()),
                _ => None,
            }
        })
        .expect("scripts/deb puts \"$binary\" into a directory");
    format!("/{directory}/redlock")
}

/// The systemd units the manual shows, and those installed beside it as examples, run redlock
/// where the Debian package puts it.
#[test]
fn systemd_units_run_redlock_where_the_package_installs_it() {
    let binary = packaged_binary();
    assert_eq!(binary, "/usr/bin/redlock");
    let mut units: Vec<(String, String)> = Vec::new();
    for page in manual::pages() {
        for (language, lines) in manual::code_blocks(&page.text) {
            if language == "ini" {
                units.push((page.path.display().to_string(), lines.join("\n")));
            }
        }
    }
    let examples = manual::root().join("examples/systemd");
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        units.push((
            path.display().to_string(),
            std::fs::read_to_string(&path).unwrap(),
        ));
    }
    let mut exec_starts = 0;
    for (source, unit) in &units {
        for line in unit.lines() {
            let Some(command) = line.strip_prefix("ExecStart=") else {
                continue;
            };
            exec_starts += 1;
            let program = command.split_whitespace().next().unwrap_or_default();
            if program.ends_with("/redlock") {
                assert_eq!(program, binary, "{source}: {line}");
            }
        }
    }
    assert!(exec_starts >= 3, "ExecStart= lines found: {exec_starts}");
}

/// The words of the `redlock` invocation that starts `line` (continuation lines joined), as a
/// shell splits them, up to the first operator (`;`, `|`, `&`, `>`, `<`, the `)` that closes a
/// `$(`) or comment. Quotes are removed; `$(...)` and variables are kept as written, except
/// `$$`, the shell's process id.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => words.extend(word.take()),
            ';' | '|' | '&' | '>' | '<' | ')' => break,
            '#' if word.is_none() => break,
            '\'' | '"' => {
                let text = word.get_or_insert_with(String::new);
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    text.push(q);
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                let text = word.get_or_insert_with(String::new);
                text.push('$');
                let mut depth = 0;
                for q in chars.by_ref() {
                    text.push(q);
                    depth += match q {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    if depth == 0 {
                        break;
                    }
                }
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
        .into_iter()
        .map(|w| if w == "$$" { "4242".to_string() } else { w })
        .collect()
}

/// Every `redlock` command line the manual shows (README.md and docs/: shell, cron, CI, unit
/// files and transcripts alike), as a user would paste it.
fn invocations() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for page in manual::pages() {
        for (_, lines) in manual::code_blocks(&page.text) {
            let joined = lines.join("\n").replace("\\\n", " ");
            for line in joined.lines() {
                // The command's name where a command starts (a line, `$(`, `ExecStart=`, the
                // program's path), not a file of that name (`cp redlock /usr/local/bin/`).
                let start = line.match_indices("redlock ").find(|&(at, _)| {
                    let before = &line[..at];
                    let after = line[at..].split_whitespace().nth(1).unwrap_or("#");
                    let starts = before.is_empty()
                        || before.ends_with(['(', ' ', '='])
                        || before.ends_with("bin/");
                    // Not the text of a message in `${VAR:?...}` either.
                    let in_expansion = before.matches("${").count() > before.matches('}').count();
                    starts && !after.starts_with(['/', '#']) && !in_expansion
                });
                if let Some((at, _)) = start {
                    found.push((page.path.display().to_string(), line[at..].to_string()));
                }
            }
        }
    }
    found
}

/// Every command line the manual shows is one redlock accepts: each option exists, belongs to
/// that subcommand and takes the value shown. (What the exit-code table's examples do when
/// run, tests/exit_codes.rs checks.)
#[test]
fn every_command_line_in_the_manual_is_accepted_as_written() {
    use clap::{CommandFactory, error::ErrorKind};
    let invocations = invocations();
    assert!(
        invocations.len() > 40,
        "only {} command lines found: is the parser right?",
        invocations.len()
    );
    let mut refused = Vec::new();
    for (page, line) in &invocations {
        let mut words = shell_words(line);
        // `redlock release  # uses REDLOCK_KEY and REDLOCK_TOKEN`: what the line says the
        // environment gives, as the environment would.
        for (variable, option) in [("REDLOCK_KEY", "--key"), ("REDLOCK_TOKEN", "--token")] {
            if line.contains(variable) && !words.iter().any(|word| word == option) {
                words.extend([option.to_string(), format!("from-{variable}")]);
            }
        }
        let mut definition = cli::Cli::command();
        let parsed = definition
            .try_get_matches_from_mut(&words)
            .and_then(|matches| cli::check_placement(&mut definition, &matches));
        match parsed {
            Ok(()) => {}
            Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {}
            Err(e) => refused.push(format!("{page}: {line}\n  {words:?}\n  {e}")),
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}

/// docs/architecture.md draws the folders as they are: every folder of `src/` and of
/// `src/lock/` has its line there, and every source file it names (where a safety argument
/// lives) exists.
#[test]
fn the_architecture_page_names_every_folder_and_only_files_that_exist() {
    let page = manual::page("docs/architecture.md");
    let root = manual::root();
    let folders = |dir: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            // A folder git does not know (left empty by a move) is no module.
            .filter(|p| p.is_dir() && std::fs::read_dir(p).unwrap().next().is_some())
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let mut missing = Vec::new();
    for dir in ["src", "src/lock"] {
        for folder in folders(dir) {
            let drawn = page.text.lines().any(|l| {
                l.trim_start()
                    .trim_start_matches(['│', '├', '└', '─', '>', ' '])
                    .starts_with(&format!("{folder}/"))
            });
            if !drawn {
                missing.push(format!("{dir}/{folder}/"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "folders without a line in docs/architecture.md: {missing:?}"
    );
    let named: Vec<&str> = page
        .text
        .split('`')
        .filter(|s| s.starts_with("src/") && s.ends_with(".rs"))
        .collect();
    assert!(named.len() > 10, "too few source files named: {named:?}");
    let gone: Vec<&&str> = named.iter().filter(|p| !root.join(p).exists()).collect();
    assert!(
        gone.is_empty(),
        "docs/architecture.md names files that do not exist: {gone:?}"
    );
}

/// Every page of docs/ that the code names (in messages, help and comments) exists.
#[test]
fn every_page_the_code_names_exists() {
    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = manual::root();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut named = 0;
    let mut missing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (at, _) in text.match_indices("docs/") {
            let rest = &text[at..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || "/-_.".contains(c)))
                .unwrap_or(rest.len());
            let page = rest[..end].trim_end_matches('.');
            if !page.ends_with(".md") {
                continue;
            }
            named += 1;
            if !root.join(page).exists() {
                missing.push(format!("{}: {page}", file.display()));
            }
        }
    }
    assert!(named > 5, "too few pages named in src/: {named}");
    assert!(
        missing.is_empty(),
        "pages named in src/ that do not exist: {missing:#?}"
    );
}
