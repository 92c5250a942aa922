//! The table's declarations against the Lua they declare, and against the arguments' types.

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

/// Every script's arguments' type builds as many arguments as the script declares.
#[test]
fn every_argument_type_builds_what_its_script_reads() {
    let built = scripts::built();
    assert_eq!(built.len(), TABLE.len(), "every row is built");
    for (row, count) in built {
        assert_eq!(count, row.argv, "{}: arguments built", row.name);
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
