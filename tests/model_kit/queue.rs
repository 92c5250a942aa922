//! The queue as a master stores it (the sorted set `KEYS[3]`, token scored by ticket), for any
//! model's places. A place's lease (`KEYS[4]`) is not kept: a place is there while its lease
//! runs and gone once it lapsed, which is what `first_live` (src/lock/scripts/queue_lua.rs)
//! makes of it before any script decides anything, so dropping it at once is the same.

use super::Token;

/// What a model keeps of a place: its ticket and its token first, so that its order (derived)
/// is Redis's, by ticket then token (tokens are unique).
pub trait Place: Copy + Ord {
    fn token(&self) -> Token;
}

/// The most places one queue holds in the models (one per client).
const PLACES: usize = 4;

/// The queue, in Redis's order: by ticket, then by token.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Queue<P>([Option<P>; PLACES]);

impl<P> Default for Queue<P> {
    fn default() -> Self {
        Queue(std::array::from_fn(|_| None))
    }
}

impl<P: Place> Queue<P> {
    pub fn iter(&self) -> impl Iterator<Item = &P> {
        self.0.iter().flatten()
    }

    pub fn first(&self) -> Option<&P> {
        self.0[0].as_ref()
    }

    pub fn is_empty(&self) -> bool {
        self.0[0].is_none()
    }

    /// `ZADD`: the place, in its order.
    pub fn insert(&mut self, place: P) {
        let at = self.iter().take_while(|p| **p < place).count();
        assert!(
            self.0[PLACES - 1].is_none(),
            "more places than the model allows"
        );
        self.0[at..].rotate_right(1);
        self.0[at] = Some(place);
    }

    /// `ZREM` (`drop` in the Lua): `token`'s place goes, the others keep their order.
    pub fn remove(&mut self, token: Token) {
        if let Some(at) = self.position(token) {
            self.0[at] = None;
            self.0[at..].rotate_left(1);
        }
    }

    pub fn position(&self, token: Token) -> Option<usize> {
        self.iter().position(|p| p.token() == token)
    }
}
