//! `redlock release`: give back a lock taken with `acquire`.

use crate::cli::{GlobalArgs, TokenArgs};
use crate::config;
use crate::exit::{self, Failure};
use crate::lock::{Cause, Lock, Released};

use super::reentrance::NESTED_PREFIX;
use super::{open_client, wording};

pub fn release(global: &GlobalArgs, args: TokenArgs) -> Result<i32, Failure> {
    let context = config::context(global)?;
    let settings = config::release_settings(&args, &context.defaults)?;
    context.warn();
    let key = &settings.key;
    if settings.token.starts_with(NESTED_PREFIX) {
        log::info!("lock {key:?} was taken by an enclosing holder: left for it to release");
        return Ok(exit::OK);
    }
    let client = open_client(&context)?;
    let lock = Lock::from_token(key, &settings.token, settings.timing);
    match client.release(&lock) {
        Released::Yes => {
            log::info!(event = "released", key = key.as_str(), outcome = "released"; "released {key:?}");
            Ok(exit::OK)
        }
        Released::NotHeld => Err(Failure::new(
            exit::LOCK_LOST,
            format!(
                "lock {key:?} is not held by this token (it expired or was released, or someone \
                 else holds it now): nothing was deleted"
            ),
        )),
        Released::Unknown { failures } => {
            let mut failure = wording::masters_failed(
                &format!("cannot confirm the release of lock {key:?} on a majority of masters"),
                &failures,
            );
            if failures.iter().all(|f| f.cause() == Cause::Unreachable) {
                // Only then is it certainly a lock of ours, with its TTL, on those masters.
                failure
                    .message
                    .push_str("; where it is still held, it expires by its TTL");
            }
            Err(failure)
        }
    }
}
