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
}
