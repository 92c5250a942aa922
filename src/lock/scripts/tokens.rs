//! What a token holds, and the kinds of hold: the lock, a slot of a semaphore, a reader's share.
//! Tokens say what they hold (a slot's carries its limit, a reader's a prefix the queue's Lua
//! reads), so that a token that comes in from outside (`release`/`extend --token`,
//! re-entrance) and a holder a read finds are told apart here, in one place, by every layer
//! that needs it: the reads (`read::key`) as well as the kinds that take them.

/// What a lock holds: the lock itself, one slot of a semaphore (`--limit`, see
/// `semaphore`), or a reader's share of a shared lock (`--shared`, see `shared`). Renewal,
/// release and validity work the same for all three: the operations of
/// `Redlock` ask its seam (`kinds::seam`), never which it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The key K holds our token on a majority.
    Lock,
    /// One of at most `limit` slots of K, held on a quorum of `tally::slot_quorum` masters.
    Slot { limit: u32 },
    /// A reader's share of K (`--shared`), held on a majority alongside other readers.
    Reader,
}

impl Kind {
    /// What a token (printed by `acquire`) holds: a slot's token says so, with its limit (see
    /// [`slot_token`]), and so does a reader's ([`reader_token`]).
    pub fn of_token(token: &str) -> Kind {
        if is_reader_token(token) {
            return Kind::Reader;
        }
        match limit_of_token(token) {
            Some(limit) => Kind::Slot { limit },
            None => Kind::Lock,
        }
    }

    /// The `--limit` it was taken with; `None` for the lock and a reader.
    pub fn limit(self) -> Option<u32> {
        match self {
            Kind::Lock | Kind::Reader => None,
            Kind::Slot { limit } => Some(limit),
        }
    }

    /// Taken with `--shared`.
    pub fn is_reader(self) -> bool {
        self == Kind::Reader
    }
}

/// Tokens say what they hold. A lock's is a fresh random token: a UUIDv4 (122 random bits
/// from the OS generator), as 32 hex digits.
pub(in crate::lock) fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A fresh token for a slot of a semaphore of `limit`.
pub(in crate::lock) fn slot_token(limit: u32) -> String {
    format!("sem{limit}-{}", new_token())
}

/// A fresh token for a reader's share (`--shared`): `shr-<32 hex digits>`. The queue's Lua
/// tells readers from writers by this prefix (`queue_lua::READER_PREFIX`).
pub(in crate::lock) fn reader_token() -> String {
    format!("{}{}", super::queue_lua::READER_PREFIX, new_token())
}

/// Whether `token` is a reader's.
fn is_reader_token(token: &str) -> bool {
    token
        .strip_prefix(super::queue_lua::READER_PREFIX)
        .is_some_and(|random| !random.is_empty())
}

/// The limit a slot's token was taken with; `None` for a lock's token.
pub(in crate::lock) fn limit_of_token(token: &str) -> Option<u32> {
    let (limit, random) = token.strip_prefix("sem")?.split_once('-')?;
    let limit: u32 = limit.parse().ok().filter(|l| *l > 0)?;
    (!random.is_empty()).then_some(limit)
}

impl Kind {
    /// A fresh token of this kind, which says what it holds.
    pub(in crate::lock) fn new_token(self) -> String {
        match self {
            Kind::Lock => new_token(),
            Kind::Reader => reader_token(),
            Kind::Slot { limit } => slot_token(limit),
        }
    }

    /// Its name in JSON (`status --watch`, `history`): `lock`, `shared`, `semaphore`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Lock => "lock",
            Kind::Reader => "shared",
            Kind::Slot { .. } => "semaphore",
        }
    }

    /// How it holds, when not as the lock, in a holder's words: `--shared`, `a slot of
    /// --limit 2`.
    pub fn held_as(self) -> Option<String> {
        match self {
            Kind::Lock => None,
            Kind::Reader => Some("--shared".into()),
            Kind::Slot { limit } => Some(format!("a slot of --limit {limit}")),
        }
    }

    /// What the key is, for a message's start: a `semaphore`, or a `lock` (a reader's too).
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Slot { .. } => "semaphore",
            Kind::Lock | Kind::Reader => "lock",
        }
    }

    /// What a token of this kind holds of `key`, for `extend` and `release`: `lock "k"`, `the
    /// reader's share of lock "k"`, `the slot of semaphore "k"`.
    pub fn holding(self, key: &str) -> String {
        match self {
            Kind::Lock => format!("lock {key:?}"),
            Kind::Reader => format!("the reader's share of lock {key:?}"),
            Kind::Slot { .. } => format!("the slot of semaphore {key:?}"),
        }
    }

    /// What a run that loses a hold of this kind says it lost: its slot (a `--limit` run
    /// revoked by `release --force` lost a slot of a semaphore, not a lock it could look for),
    /// or the lock (a reader's share is a share of the lock).
    pub fn lost(self) -> &'static str {
        match self {
            Kind::Slot { .. } => "lost its slot",
            Kind::Lock | Kind::Reader => "lost the lock",
        }
    }

    /// Whether a redlock that wants this kind may re-use a hold of kind `outer` that an
    /// enclosing redlock passed down (re-entrance): a hold is re-used only as what it is (a
    /// slot of the same limit, a reader's share for `--shared`, the lock without either), and
    /// the lock for a reader too (the writer keeps everybody else out already). A writer inside
    /// its own reader is never let in: no reader becomes the writer, and waiting would be
    /// waiting for itself.
    pub fn nests_in(self, outer: Kind) -> Nesting {
        match (outer, self) {
            (Kind::Reader, Kind::Lock) => Nesting::Never,
            (Kind::Lock, Kind::Reader) => Nesting::Covered,
            _ if outer == self => Nesting::Covered,
            _ => Nesting::Apart,
        }
    }
}

/// How a wanted hold stands to one an enclosing redlock has ([`Kind::nests_in`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nesting {
    /// The outer hold covers it: re-used while it is still held.
    Covered,
    /// Unrelated (another limit, a slot inside a lock): taken on its own.
    Apart,
    /// Never inside it: refused while the outer hold is held.
    Never,
}

#[cfg(test)]
mod tests {
    use super::{Kind, Nesting};

    #[test]
    fn a_hold_is_re_used_only_as_what_it_is_and_a_writer_never_inside_its_reader() {
        let slot = |limit| Kind::Slot { limit };
        assert_eq!(Kind::Lock.nests_in(Kind::Lock), Nesting::Covered);
        assert_eq!(Kind::Reader.nests_in(Kind::Reader), Nesting::Covered);
        assert_eq!(slot(2).nests_in(slot(2)), Nesting::Covered);
        // The writer keeps everybody else out already: its reader is covered.
        assert_eq!(Kind::Reader.nests_in(Kind::Lock), Nesting::Covered);
        // No reader becomes the writer.
        assert_eq!(Kind::Lock.nests_in(Kind::Reader), Nesting::Never);
        assert_eq!(slot(2).nests_in(slot(3)), Nesting::Apart);
        assert_eq!(slot(2).nests_in(Kind::Lock), Nesting::Apart);
        assert_eq!(Kind::Lock.nests_in(slot(2)), Nesting::Apart);
        assert_eq!(Kind::Reader.nests_in(slot(2)), Nesting::Apart);
    }
}
