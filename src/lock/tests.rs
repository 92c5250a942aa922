//! What holds across the layers of `lock/`.

use super::scripts::TABLE;
use super::scripts::shared::INSPECT_READERS;
use super::scripts::slots::INSPECT_SLOTS;

/// A connection remembers which scripts it loaded as one bit each (`wire::lua`): two scripts
/// with one bit would make it send EVALSHA for a script it never loaded. Each script's bit is
/// its row in the one table of scripts, which this reads.
#[test]
fn every_script_has_a_bit_of_its_own() {
    assert!(TABLE.len() <= 32, "more scripts than bits in a u32 mask");
    for (row, (name, lua)) in TABLE.iter().enumerate() {
        assert_eq!(lua.bit, 1 << row, "{name}: bit {:#x}", lua.bit);
        for (other, other_lua) in &TABLE[..row] {
            assert_ne!(name, other, "two rows are named {name}");
            assert_ne!(lua.bit, other_lua.bit, "{name} and {other} share a bit");
            assert_ne!(
                lua.sha, other_lua.sha,
                "{name} and {other} are the same script"
            );
        }
    }
}

/// The scripts that read slots or shares without the shared functions write the horizon past
/// which a score is not redlock's as a literal: it must be the one the others use.
#[test]
fn every_script_knows_the_same_horizon() {
    let horizon = format!("now + {})", super::scripts::LONGEST_TTL_MS);
    for (name, lua) in [
        ("INSPECT_SLOTS", &*INSPECT_SLOTS),
        ("INSPECT_READERS", &*INSPECT_READERS),
    ] {
        assert!(lua.code.contains(&horizon), "{name}");
    }
}
