//! The values K holds that are nobody's token: the readers' marker while readers (`--shared`)
//! hold the key, and the revocation's while `release --force` keeps it closed. Every place
//! that must tell a marker from a holder's token (what `status` shows of a master, a
//! `--token` refused on the command line, an inherited token not re-used) asks here.

use super::queue_lua::SHARED_MARKER;
use super::revoke::REVOKED_MARKER;

/// A marker K may hold in place of a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// Readers hold the key; who they are is in the readers' own key.
    Readers,
    /// Revoked by `release --force`; closed until the revoked holders stop.
    Revoked,
}

impl Marker {
    /// The marker `value` is, if it is one.
    pub fn of(value: &str) -> Option<Marker> {
        match value {
            SHARED_MARKER => Some(Marker::Readers),
            REVOKED_MARKER => Some(Marker::Revoked),
            _ => None,
        }
    }

    /// The value K holds for it.
    pub fn value(self) -> &'static str {
        match self {
            Marker::Readers => SHARED_MARKER,
            Marker::Revoked => REVOKED_MARKER,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_marker_reads_back_and_a_token_is_none() {
        for marker in [Marker::Readers, Marker::Revoked] {
            assert_eq!(Marker::of(marker.value()), Some(marker));
        }
        assert_eq!(Marker::of("3f1c-token"), None);
    }
}
