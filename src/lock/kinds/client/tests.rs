//! Unit tests of `client`.

use super::*;
use crate::lock::kinds::attempt::retry_delay;
use crate::lock::kinds::held::{Timing, new_token, reader_token};

#[test]
fn retry_delays_grow_and_stay_bounded() {
    for attempt in 0..40 {
        let d = retry_delay(attempt);
        assert!(d >= Duration::from_millis(5), "{d:?}");
        assert!(d <= Duration::from_millis(250), "{d:?}");
    }
    assert!(retry_delay(0) <= Duration::from_millis(10));
}

#[test]
fn tokens_are_unique_and_unguessable_length() {
    let a = new_token();
    assert_eq!(a.len(), 32);
    assert_ne!(a, new_token());
}

#[test]
fn a_reader_gets_no_fencing_token_and_nothing_is_asked_of_the_masters() {
    // A master nobody listens on: any request would fail as unreachable, not as refused.
    let master = Master::parse("redis://127.0.0.1:1").unwrap();
    let client = Redlock::new(vec![master], None).unwrap();
    let timing = Timing::new(Duration::from_secs(10));
    let reader = Lock::from_token("k", &reader_token(), timing);
    assert_eq!(client.fence(&reader), Err(FenceError::Shared));
}
