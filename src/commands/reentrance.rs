//! Re-entrance: a redlock started under a redlock that holds the same lock (through
//! REDLOCK_KEY and REDLOCK_TOKEN in its environment) re-uses that lock instead of waiting for
//! itself.

use std::time::Duration;

use crate::config::env;
use crate::exit::Failure;
use crate::lock::{Kind, Marker, Nesting, Redlock};

/// The prefix `acquire` puts on the token of a nested (re-entrant) acquisition: `release`
/// leaves such a lock to the outer holder.
pub const NESTED_PREFIX: &str = "nested:";

/// If this process inherited a lock on `key` (REDLOCK_KEY and REDLOCK_TOKEN, as `run` and
/// `acquire --format env` provide) that a majority still holds, its token: the caller is inside
/// the holder and must re-use the lock, not wait for itself. Either variable set to something
/// that is not text is an error: taken for unset, the caller would wait for itself.
pub fn inherited_lock(
    client: &Redlock,
    key: &str,
    wanted: Kind,
    node_timeout: Duration,
) -> Result<Option<String>, Failure> {
    let inherited_key = env::text(env::KEY_ENV)?;
    let token = env::text(env::TOKEN_ENV)?;
    let (Some(inherited_key), Some(token)) = (inherited_key, token) else {
        return Ok(None);
    };
    let token = token.strip_prefix(NESTED_PREFIX).unwrap_or(&token);
    // The markers K holds for readers and while revoked are nobody's token: "re-using" one
    // would let this process in beside the readers, or beside a revoked holder still inside.
    if inherited_key != key || token.is_empty() || Marker::of(token).is_some() {
        return Ok(None);
    }
    // Re-used only as what it is (`Kind::nests_in`). One read, judged as `status` judges
    // the key: the lock, the slot or the share the token names holds it on its quorum, or it
    // does not.
    let held = || client.observe(key, node_timeout).holds(token);
    match wanted.nests_in(Kind::of_token(token)) {
        Nesting::Never if held() => {
            return Err(Failure::usage(format!(
                "lock {key:?} is held by this process's own reader (--shared): a reader cannot \
                 become the writer; take the outer lock without --shared"
            )));
        }
        Nesting::Never | Nesting::Apart => return Ok(None),
        Nesting::Covered => {}
    }
    Ok(reused(key, token, held()))
}

/// The inherited token if it still `held`, saying which it is.
fn reused(key: &str, token: &str, held: bool) -> Option<String> {
    if held {
        log::info!("lock {key:?} is already held by an enclosing redlock: re-using it");
        Some(token.to_string())
    } else {
        log::info!("inherited lock {key:?} is no longer held: taking it afresh");
        None
    }
}
