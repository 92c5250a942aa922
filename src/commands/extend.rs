//! `redlock extend`: give a lock taken with `acquire` a full TTL again.

use crate::cli::{ExtendArgs, GlobalArgs};
use crate::config;
use crate::exit::{self, Failure};
use crate::lock::{ExtendError, Lock};

use super::reentrance::NESTED_PREFIX;
use super::{open_client, wording};

pub fn extend(global: &GlobalArgs, args: ExtendArgs) -> Result<i32, Failure> {
    let context = config::context(global)?;
    let settings = config::extend_settings(&args, &context.defaults)?;
    context.warn();
    let key = &settings.key;
    // A nested token extends the enclosing holder's lock: harmless, and what the caller means.
    let token = settings
        .token
        .strip_prefix(NESTED_PREFIX)
        .unwrap_or(&settings.token);
    let client = open_client(&context)?;
    let mut lock = Lock::from_token(key, token, settings.timing);
    let (what, needed) = wording::token_holds(key, &lock, &client);
    match client.extend(&mut lock) {
        Ok(()) => {
            log::info!(
                "extended {key:?} by {}",
                humantime::format_duration(settings.timing.ttl)
            );
            Ok(exit::OK)
        }
        Err(ExtendError::Gone) => Err(Failure::new(
            exit::LOCK_LOST,
            format!(
                "{what} is not held by this token any more (it expired or was released): it was \
                 not re-created; take it again with `redlock acquire`"
            ),
        )),
        Err(ExtendError::Revoked(revocation)) => Err(Failure::new(
            exit::LOCK_LOST,
            format!(
                "{what} was revoked by `redlock release --force`: {}; stop using it, and \
                 release it with this token to say so",
                revocation.describe()
            ),
        )),
        Err(ExtendError::Unconfirmed { failures }) => Err(wording::masters_failed(
            &format!("cannot confirm the extension of {what} on {needed}"),
            &failures,
        )),
    }
}
