//! Re-entrance: a redlock started under a redlock that holds the same lock (through
//! REDLOCK_KEY and REDLOCK_TOKEN in its environment) re-uses that lock instead of waiting for
//! itself.

use std::time::Duration;

use crate::config::env;
use crate::exit::Failure;
use crate::lock::{Redlock, Verdict};

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
    node_timeout: Duration,
) -> Result<Option<String>, Failure> {
    let inherited_key = env::text(env::KEY_ENV)?;
    let token = env::text(env::TOKEN_ENV)?;
    let (Some(inherited_key), Some(token)) = (inherited_key, token) else {
        return Ok(None);
    };
    let token = token.strip_prefix(NESTED_PREFIX).unwrap_or(&token);
    if inherited_key != key || token.is_empty() {
        return Ok(None);
    }
    let states: Vec<_> = client
        .inspect(key, node_timeout)
        .into_iter()
        .map(|inspection| inspection.state)
        .collect();
    match crate::lock::judge(&states) {
        Verdict::Held { token: holder, .. } if holder == token => {
            log::info!("lock {key:?} is already held by an enclosing redlock: re-using it");
            Ok(Some(token.to_string()))
        }
        _ => {
            log::info!("inherited lock {key:?} is no longer held: taking it afresh");
            Ok(None)
        }
    }
}
