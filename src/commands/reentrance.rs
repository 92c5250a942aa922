//! Re-entrance: a redlock started under a redlock that holds the same lock (through
//! REDLOCK_KEY and REDLOCK_TOKEN in its environment) re-uses that lock instead of waiting for
//! itself.

use std::time::Duration;

use crate::config::env;
use crate::exit::Failure;
use crate::lock::{Kind, Redlock, Verdict, judge_readers, judge_slots};

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
    if inherited_key != key || token.is_empty() {
        return Ok(None);
    }
    // Re-used only as what it is: a slot of the same limit for `--limit`, a reader's share for
    // `--shared`, the lock without either.
    if Kind::of_token(token) != wanted {
        return Ok(None);
    }
    if wanted.is_reader() {
        let held = judge_readers(&client.inspect_readers(key, node_timeout))
            .iter()
            .any(|reader| reader.token == token);
        return Ok(reused(key, token, held));
    }
    if wanted.limit().is_some() {
        let states: Vec<_> = client
            .inspect_slots(key, node_timeout)
            .into_iter()
            .map(|inspection| inspection.state)
            .collect();
        let held = judge_slots(&states)
            .is_some_and(|semaphore| semaphore.holders.iter().any(|h| h.token == token));
        return Ok(reused(key, token, held));
    }
    let states: Vec<_> = client
        .inspect(key, node_timeout)
        .into_iter()
        .map(|inspection| inspection.state)
        .collect();
    let held = matches!(
        crate::lock::judge(&states),
        Verdict::Held { token: holder, .. } if holder == token
    );
    Ok(reused(key, token, held))
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
