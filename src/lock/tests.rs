//! What holds across the layers of `lock/`.

use super::scripts::TABLE;
use super::scripts::queue_lua::FUNCTIONS;

/// A connection remembers which scripts it loaded as one bit each (`wire::lua`): two scripts
/// with one bit would make it send EVALSHA for a script it never loaded. Each script's bit is
/// its row in the one table of scripts, which this reads.
#[test]
fn every_script_has_a_bit_of_its_own() {
    assert!(TABLE.len() <= 32, "more scripts than bits in a u32 mask");
    for (row, script) in TABLE.iter().enumerate() {
        let (name, lua) = (script.name, &script.lua);
        assert_eq!(lua.bit, 1 << row, "{name}: bit {:#x}", lua.bit);
        for other in &TABLE[..row] {
            let (other, other_lua) = (other.name, &other.lua);
            assert_ne!(name, other, "two rows are named {name}");
            assert_ne!(lua.bit, other_lua.bit, "{name} and {other} share a bit");
            assert_ne!(
                lua.sha, other_lua.sha,
                "{name} and {other} are the same script"
            );
        }
    }
}

/// A script that writes the horizon past which a score is not redlock's as a literal (rather
/// than the shared functions' `LONGEST`, or an argument: READ's, see `read::scan`) must write
/// the one the others use.
#[test]
fn every_script_knows_the_same_horizon() {
    let horizon = super::scripts::LONGEST_TTL_MS.to_string();
    for script in &TABLE {
        let (name, lua) = (script.name, &script.lua);
        for (at, _) in lua.code.match_indices("now + ") {
            let literal: String = lua.code[at + "now + ".len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            assert!(
                literal.is_empty() || literal == horizon,
                "{name}: a horizon of {literal} ms"
            );
        }
    }
}

/// Scripts are sent compacted, with only the shared functions they use (`wire::lua`): sound
/// only for Lua without long strings and without a comment after code on a line, and only if
/// every shared function a script names is defined in what is sent.
#[test]
fn every_script_is_sent_with_what_it_calls() {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let names: Vec<&str> = FUNCTIONS
        .lines()
        .filter_map(|line| line.strip_prefix("local "))
        .map(|rest| rest.strip_prefix("function ").unwrap_or(rest))
        .map(|rest| rest.split(|c: char| !word(c)).next().unwrap_or_default())
        .collect();
    assert!(
        names.len() > 10,
        "the shared functions are found: {names:?}"
    );
    // What `Lua::composed` reads as a definition: each starts at the margin, and the library
    // holds nothing else there (a statement would be sent only with the definition above it).
    for line in FUNCTIONS.lines() {
        let margin = !line.starts_with(' ');
        assert!(
            !margin || line.is_empty() || line.starts_with("local ") || line == "end",
            "a line of the shared functions that is no definition: {line}"
        );
    }
    for row in &TABLE {
        let (script, lua) = (row.name, &row.lua);
        assert!(!lua.code.contains("[["), "{script} has a long string");
        for line in lua.code.lines() {
            assert!(
                !line.contains("--"),
                "{script}: a comment after code: {line}"
            );
            assert_eq!(line, line.trim(), "{script}: not compacted");
        }
        let words: Vec<&str> = lua.code.split(|c: char| !word(c)).collect();
        for name in &names {
            if words.contains(name) {
                let defined = lua.code.lines().any(|line| {
                    line.starts_with(&format!("local function {name}("))
                        || line.starts_with(&format!("local {name} ="))
                });
                assert!(defined, "{script} names {name} without defining it");
            }
        }
    }
}
