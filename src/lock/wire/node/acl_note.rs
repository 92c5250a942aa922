//! The note a node adds to an ACL refusal, for what the master left out of it (see `cause`,
//! which reads it): the user this connection logged in as, and, where Redis refused a command
//! inside a script without naming it, the command on the script's line it names. Here, apart
//! from `cause`, because the node writes it and `cause` reads the node's errors.

/// Redis's words for a command refused inside a script, in lower case.
pub(in crate::lock::wire) const SCRIPT_REFUSAL: &str = "user executing the script can't run";
/// How [`permission_note`] names the user and the command.
pub(in crate::lock::wire) const AS_USER: &str = "(redlock's user ";
pub(in crate::lock::wire) const RUNS: &str = ", whose line runs ";

/// What `refused`, an ACL refusal, leaves out, added in a note for `cause` to read: `user`
/// (the one this connection logged in as) where it names none, and where Redis refused a
/// command inside `script` without naming it, the command on the line it names
/// (`@user_script:106`). `None` when it is no such refusal, or names both.
pub(in crate::lock::wire) fn permission_note(
    refused: &str,
    user: &str,
    script: Option<&str>,
) -> Option<String> {
    let lower = refused.to_ascii_lowercase();
    if !(refused.starts_with("NOPERM") || lower.contains(SCRIPT_REFUSAL))
        || refused.contains("User ")
    {
        return None;
    }
    let line = quoted(refused, "@user_script:", &['.'])
        .and_then(|n| n.parse::<usize>().ok())
        .and_then(|n| script?.lines().nth(n.checked_sub(1)?));
    let command = match line
        .filter(|_| !refused.contains("run the '"))
        .and_then(called)
    {
        Some(command) => format!("{RUNS}{command}"),
        None => String::new(),
    };
    Some(format!("{refused} {AS_USER}{user}{command})"))
}

/// The one command a line of Lua calls by name (`redis.call('PEXPIREAT', ...)`), if it calls
/// exactly one.
fn called(line: &str) -> Option<String> {
    let mut names = line
        .split("call('")
        .skip(1)
        .filter_map(|rest| rest.split('\'').next());
    let first = names.next()?;
    names
        .all(|name| name.eq_ignore_ascii_case(first))
        .then(|| first.to_ascii_uppercase())
}

/// The text between `start` and the next of `ends`, if any.
pub(in crate::lock::wire) fn quoted(text: &str, start: &str, ends: &[char]) -> Option<String> {
    let from = text.find(start)? + start.len();
    let to = text[from..].find(ends)? + from;
    Some(text[from..to].to_string()).filter(|found| !found.is_empty())
}
