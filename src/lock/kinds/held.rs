//! A lock held on a majority of masters, and the timing that bounds its validity.
//!
//! The validity is the one number the safety promise rests on: a lock taken (or extended) by a
//! round that started at `start` is ours until `start + TTL − drift`, never longer, whatever the
//! masters' clocks say. Everything that acts under the lock reads it from here.
//!
//! Why it holds: each master of the majority set the key (SET NX PX, or extended it) after the
//! round started and keeps it a full TTL by its own clock, so until `start + TTL − drift` by
//! ours a majority still has our token, and any other client's SET NX fails on at least one
//! master of any majority it could reach.
//!
//! # Assumes
//! - **Masters keep keys for a full TTL.** A master that restarts empty (no `appendonly yes`
//!   with `appendfsync always`, and back sooner than the longest TTL), that evicts the key
//!   (`allkeys-*`; `volatile-*` without headroom), or a replica promoted over it, forgets our
//!   token: another client can then make a majority with it while we count on ours.
//!   `doctor` guards it with its *persistence* (warning), *eviction* (error for `allkeys-*`,
//!   warning for `volatile-*`) and *role* (a replica: error) checks.
//! - **Master clocks do not jump.** A master expires keys by its own clock: one stepped forward
//!   (set by hand, an NTP step) expires the key early. `doctor`'s *clock* check warns when the
//!   masters' clocks differ by more than 500 ms (a jump that happened shows there; one to come
//!   cannot be seen).
//! - **Clock rates drift less than the drift factor.** The validity is measured on this host's
//!   monotonic clock, the TTL on each master's: over one TTL their rates may differ by at most
//!   `drift_factor` (1% by default, plus 2 ms for the granularity of PX). No `doctor` check can
//!   measure a rate; NTP that slews rather than steps keeps it far below 1%.

use std::time::{Duration, Instant};

use super::wakeup::Wakeup;
use crate::lock::quorum::outcome::MasterFailure;
use crate::lock::quorum::round::Refusals;
use crate::lock::scripts::history::History;
pub use crate::lock::scripts::tokens::Kind;
#[cfg(test)]
pub(in crate::lock) use crate::lock::scripts::tokens::{
    limit_of_token, new_token, reader_token, slot_token,
};

/// How long a lock lives and how patient each request is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// The lock's time to live on each master.
    pub ttl: Duration,
    /// How long one master gets to answer one request, connecting included.
    pub node_timeout: Duration,
    /// The share of the TTL set aside for clock drift between this host and the masters.
    pub drift_factor: f64,
}

impl Timing {
    pub const DEFAULT_DRIFT_FACTOR: f64 = 0.01;

    /// The per-node timeout used when none is given: TTL/20, between 10 ms and 1 s. Small next
    /// to the TTL, so a dead master costs little validity; large enough for a slow network.
    pub fn default_node_timeout(ttl: Duration) -> Duration {
        (ttl / 20).clamp(Duration::from_millis(10), Duration::from_secs(1))
    }

    pub fn new(ttl: Duration) -> Timing {
        Timing {
            ttl,
            node_timeout: Self::default_node_timeout(ttl),
            drift_factor: Self::DEFAULT_DRIFT_FACTOR,
        }
    }

    /// Clock drift allowance: TTL × factor + 2 ms (the 2 ms cover the granularity of PX).
    pub fn drift(&self) -> Duration {
        self.ttl.mul_f64(self.drift_factor) + Duration::from_millis(2)
    }

    /// When a lock taken (or extended) by a round that started at `start` stops being valid.
    pub(in crate::lock) fn validity_end(&self, start: Instant) -> Instant {
        start + self.ttl.saturating_sub(self.drift())
    }

    pub(in crate::lock) fn ttl_ms(&self) -> Vec<u8> {
        self.ttl.as_millis().to_string().into_bytes()
    }
}

/// A lock held on a majority of masters, or a semaphore slot held on its quorum.
#[derive(Clone, Debug)]
pub struct Lock {
    pub(in crate::lock) kind: Kind,
    pub(in crate::lock) key: String,
    pub(in crate::lock) token: String,
    pub(in crate::lock) timing: Timing,
    pub(in crate::lock) validity_end: Instant,
    /// Masters that refused the acquisition for a configuration reason (a wrong password, a
    /// replica) although a majority granted it: the lock holds, with less fault tolerance. And
    /// the masters whose answer was not waited for, to be asked again (see `late`).
    pub(in crate::lock) refusals: Refusals,
    /// What started the turn in the fair queue that took it (`None`: taken without waiting in
    /// line).
    pub(in crate::lock) woken_by: Option<Wakeup>,
    /// The masters (by index) known to have given it K in the round that took it. A
    /// revocation found elsewhere later is not known to be this hold's (see `renewal`): a
    /// master that refused never held it (an extension never re-creates it), and one the
    /// round did not wait for may have refused. `None` for a lock rebuilt from its token.
    pub(in crate::lock) granted_by: Option<Vec<usize>>,
    /// Where its release records the turn's end (see `scripts::history`).
    pub(in crate::lock) history: History,
}

impl Lock {
    /// Rebuilds a lock from its key and token (e.g. printed by `acquire`), to extend or release
    /// it. Its validity is unknown, so it counts as already expired until extended. What it
    /// holds comes from the token ([`Kind::of_token`]).
    pub fn from_token(key: &str, token: &str, timing: Timing) -> Lock {
        Lock {
            kind: Kind::of_token(token),
            key: key.to_string(),
            token: token.to_string(),
            timing,
            validity_end: Instant::now(),
            refusals: Refusals::default(),
            woken_by: None,
            granted_by: None,
            history: History::default(),
        }
    }

    /// Rebuilds a lock whose validity end is known (handed over from the process that took it).
    pub fn with_validity(key: &str, token: &str, timing: Timing, validity_end: Instant) -> Lock {
        Lock {
            validity_end,
            ..Lock::from_token(key, token, timing)
        }
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// The instant after which this client may no longer assume it holds the lock.
    pub fn validity_end(&self) -> Instant {
        self.validity_end
    }

    /// Masters that refused to take part for a configuration reason, though a majority took the
    /// lock (only those that answered before the decision).
    pub fn refusals(&self) -> &[MasterFailure] {
        &self.refusals.heard
    }

    /// What started the turn in the fair queue that took it; `None` when it was taken without
    /// waiting in line.
    pub fn woken_by(&self) -> Option<Wakeup> {
        self.woken_by
    }

    /// What is left of the validity now.
    pub fn validity(&self) -> Duration {
        self.validity_end.saturating_duration_since(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_node_timeout_is_a_small_share_of_the_ttl() {
        let t = Timing::default_node_timeout;
        assert_eq!(t(Duration::from_secs(30)), Duration::from_secs(1));
        assert_eq!(t(Duration::from_secs(10)), Duration::from_millis(500));
        assert_eq!(t(Duration::from_secs(1)), Duration::from_millis(50));
        assert_eq!(t(Duration::from_millis(100)), Duration::from_millis(10));
    }

    #[test]
    fn tokens_say_what_they_hold() {
        let reader = reader_token();
        assert!(reader.starts_with("shr-") && reader.len() == 36, "{reader}");
        assert_eq!(Kind::of_token(&reader), Kind::Reader);
        assert_eq!(Kind::of_token(&new_token()), Kind::Lock);
        assert_eq!(Kind::of_token(&slot_token(3)), Kind::Slot { limit: 3 });
        assert_eq!(Kind::of_token("shr-"), Kind::Lock);
        for kind in [Kind::Lock, Kind::Reader, Kind::Slot { limit: 2 }] {
            assert_eq!(Kind::of_token(&super::super::seam(kind).new_token()), kind);
        }
    }

    #[test]
    fn drift_is_one_percent_plus_two_ms_by_default() {
        let timing = Timing::new(Duration::from_secs(10));
        assert_eq!(timing.drift(), Duration::from_millis(102));
    }
}
