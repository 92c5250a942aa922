//! Unit tests of `client`.

use super::*;
use crate::lock::kinds::held::new_token;

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
