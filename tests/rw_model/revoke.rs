//! `release --force` on a shared key (src/lock/kinds/revoke.rs; FORCE, READ_EXTEND,
//! READ_RELEASE's `cross_off` in src/lock/scripts/revoke.rs and shared.rs): a forcer (`x`)
//! sends FORCE at any moment, every holder renews once at any moment. A revoked holder still
//! holds until its renewal is refused (then it stops and releases) or it releases anyway; its
//! release crosses it off, and the last one opens K and wakes the line. The same properties
//! as every run (a writer alone, every holder keeping K closed on its quorum, the order, no
//! lost wake-up), and the known-bad rule they catch: freeing K at once.

use super::properties::{ALONE, KEPT};
use super::protocol::Flaw;
use super::protocol::Mode::{Forcer as X, Reader as R, Writer as W};
use super::start::Start;
use super::system::RwModel;
use super::{breaks, design, flawed, holds};

/// Two readers revoked at any moment, a writer waiting: it enters once both stopped, woken
/// by the last one's release.
#[test]
fn revoked_readers_let_the_waiting_writer_in_after_both_stopped() {
    holds(RwModel {
        extend: true,
        ..design(Start {
            holding: &[R, R],
            waiting: &[W],
            joining: &[],
            newcomers: &[X],
        })
    });
}

/// A writer revoked at any moment, a reader waiting: it enters once the writer stopped.
#[test]
fn a_revoked_writer_lets_the_reader_in() {
    holds(RwModel {
        extend: true,
        ..design(Start {
            holding: &[W],
            waiting: &[R],
            joining: &[],
            newcomers: &[X],
        })
    });
}

/// The known-bad rule: FORCE frees K at once. The waiting writer's timer takes K while a
/// revoked reader, which has not renewed yet, still reads.
#[test]
fn flaw_freeing_k_at_once_on_force_lets_a_writer_in_beside_a_reader() {
    breaks(
        RwModel {
            timers: 1,
            ..flawed(
                Flaw::ForceFreesAtOnce,
                Start {
                    holding: &[R],
                    waiting: &[W],
                    joining: &[],
                    newcomers: &[X],
                },
            )
        },
        &[ALONE, KEPT],
    );
}
