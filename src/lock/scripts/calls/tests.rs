//! The table's declarations against the Lua they declare, and against the arguments' types.

use super::{Args, Row, Script};
use crate::lock::scripts::{self, TABLE};

/// The highest `NAME[n]` the Lua names with a number (0: none). An index that is a variable is
/// not read: the one there is, `keep`'s loop over the queue keys (3 to 6), stays below the
/// lock's keys that every script using it takes.
fn highest(code: &str, name: &str) -> usize {
    let opening = format!("{name}[");
    code.match_indices(&opening)
        .filter(|(at, _)| {
            // `KEYS[` inside another word (`MY_KEYS[`) is not the table.
            !code[..*at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
        .filter_map(|(at, _)| {
            let digits: String = code[at + opening.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse::<usize>().ok()
        })
        .max()
        .unwrap_or(0)
}

/// Every script reads exactly the keys it declares (its last one included) and exactly the
/// arguments it declares, in the Lua that is sent (the shared functions it uses included).
#[test]
fn every_script_reads_what_it_declares() {
    let mut wrong = Vec::new();
    for row in &TABLE {
        let code = row.lua.code;
        let (keys, argv) = (highest(code, "KEYS"), highest(code, "ARGV"));
        if keys != row.keys.count() {
            wrong.push(format!(
                "{} reads KEYS[{keys}], declares {:?} ({})",
                row.name,
                row.keys,
                row.keys.count()
            ));
        }
        if argv != row.argv {
            wrong.push(format!(
                "{} reads ARGV[{argv}], declares {}",
                row.name, row.argv
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What each argument type builds, and the script it goes with.
fn built<A: Args + Default>(script: &'static Script<A>) -> (&'static Row, usize) {
    (&script.row, A::default().argv(b"PUBLISH").len())
}

/// Every script's arguments' type builds as many arguments as the script declares.
#[test]
fn every_argument_type_builds_what_its_script_reads() {
    let built = [
        built(&scripts::ACQUIRE),
        built(&scripts::EXTEND),
        built(&scripts::RELEASE),
        built(&scripts::INSPECT),
        built(&scripts::FENCE_PROPOSE),
        built(&scripts::WAIT),
        built(&scripts::LEAVE),
        built(&scripts::ACQUIRE_SLOT),
        built(&scripts::WAIT_SLOT),
        built(&scripts::EXTEND_SLOT),
        built(&scripts::RELEASE_SLOT),
        built(&scripts::LEAVE_SLOT),
        built(&scripts::INSPECT_SLOTS),
        built(&scripts::READ_ACQUIRE),
        built(&scripts::READ_WAIT),
        built(&scripts::READ_EXTEND),
        built(&scripts::READ_RELEASE),
        built(&scripts::INSPECT_READERS),
        built(&scripts::READ),
        built(&scripts::PAGE),
        built(&scripts::ORDER),
        built(&scripts::FORCE),
        built(&scripts::WAIT_SUPERSEDE),
    ];
    assert_eq!(built.len(), TABLE.len(), "every row is built here");
    for (row, count) in built {
        assert_eq!(count, row.argv, "{}: arguments built", row.name);
        assert!(
            TABLE.iter().any(|listed| std::ptr::eq(*listed, row)),
            "{} is in the table",
            row.name
        );
    }
}

/// The reading itself.
#[test]
fn highest_reads_the_numbers() {
    assert_eq!(highest("redis.call('GET', KEYS[1], KEYS[12])", "KEYS"), 12);
    assert_eq!(highest("local x = ARGV[3] .. MY_ARGV[9]", "ARGV"), 3);
    assert_eq!(highest("return 1", "KEYS"), 0);
    assert_eq!(highest("for i = 3, 6 do x(KEYS[i]) end", "KEYS"), 0);
}
