//! What holds across the layers of `lock/`.

use std::sync::LazyLock;

use super::read::scan::{PAGE, READ};
use super::scripts::lock::{ACQUIRE, EXTEND, FENCE_PROPOSE, INSPECT, RELEASE};
use super::scripts::queue::{LEAVE, WAIT};
use super::scripts::shared::{INSPECT_READERS, READ_ACQUIRE, READ_EXTEND, READ_RELEASE, READ_WAIT};
use super::scripts::slots::{
    ACQUIRE_SLOT, EXTEND_SLOT, INSPECT_SLOTS, LEAVE_SLOT, RELEASE_SLOT, WAIT_SLOT,
};
use super::wire::lua::Lua;

/// Every script redlock runs, by name.
fn every_script() -> Vec<(&'static str, &'static Lua)> {
    let all: [(&str, &LazyLock<Lua>); 20] = [
        ("ACQUIRE", &ACQUIRE),
        ("EXTEND", &EXTEND),
        ("RELEASE", &RELEASE),
        ("INSPECT", &INSPECT),
        ("FENCE_PROPOSE", &FENCE_PROPOSE),
        ("WAIT", &WAIT),
        ("LEAVE", &LEAVE),
        ("ACQUIRE_SLOT", &ACQUIRE_SLOT),
        ("WAIT_SLOT", &WAIT_SLOT),
        ("EXTEND_SLOT", &EXTEND_SLOT),
        ("RELEASE_SLOT", &RELEASE_SLOT),
        ("LEAVE_SLOT", &LEAVE_SLOT),
        ("INSPECT_SLOTS", &INSPECT_SLOTS),
        ("READ_ACQUIRE", &READ_ACQUIRE),
        ("READ_WAIT", &READ_WAIT),
        ("READ_EXTEND", &READ_EXTEND),
        ("READ_RELEASE", &READ_RELEASE),
        ("INSPECT_READERS", &INSPECT_READERS),
        ("READ (scan)", &READ),
        ("PAGE (scan)", &PAGE),
    ];
    all.into_iter().map(|(name, lua)| (name, &**lua)).collect()
}

/// A connection remembers which scripts it loaded as one bit each (`wire::lua`): two scripts
/// with one bit would make it send EVALSHA for a script it never loaded.
#[test]
fn every_script_has_a_bit_of_its_own() {
    let scripts = every_script();
    for (i, (name, lua)) in scripts.iter().enumerate() {
        assert_eq!(lua.bit.count_ones(), 1, "{name}: bit {:#x}", lua.bit);
        for (other, other_lua) in &scripts[..i] {
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
