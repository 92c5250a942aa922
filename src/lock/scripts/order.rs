//! The order register's script (`--order`, see `kinds::order` for why a majority of them is a
//! max register): ORDER reads it, or raises it, in one call, and [`register`] decodes what a
//! master says.
//!
//! The register holds the highest order that took the lock, as a decimal number, with a TTL of
//! a year and a day ([`super::LONGEST_TTL_MS`]) set again at every raise: a key nobody raised
//! for that long is forgotten, as every key redlock writes but the fencing counter is (see
//! `scripts`). Orders are whole numbers below 2^53, which Lua's doubles hold exactly.

use std::sync::LazyLock;

use super::bit;
use crate::lock::wire::lua::Lua;
use crate::lock::wire::node::NodeError;
use crate::lock::wire::resp::Reply;

/// The largest order a run may give: Lua compares numbers as doubles, exact up to 2^53.
pub const MAX_ORDER: u64 = (1 << 53) - 1;

/// Reads the order register and, when asked, raises it: sets it to the order (with its TTL)
/// unless it holds a higher one. An equal order sets it again (a retry of the same run), which
/// renews its TTL. A register that is not a whole number, or one above [`MAX_ORDER`], is an
/// error naming it: nothing is written over what another client put there, and no order that
/// no run could give is taken as the highest. (Above 2^53 a Lua number is no longer exact, so
/// one such register would compare equal to its neighbours; above 2^64 it would not even be
/// read back. Any whole number above `MAX_ORDER` converts to a double of 2^53 or more, since
/// the conversion rounds to the nearest and 2^53 is exact: the comparison below is exact.)
/// KEYS: the layout (`keys::Names::keys`) through the register, 13, the one it reads.
/// ARGV: the order, '1' to raise ('' to read only), the register's TTL in ms.
/// Returns what the register held before (nil where there was none).
pub static ORDER: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        r"
local held = redis.call('GET', KEYS[13])
if held and not string.match(held, '^%d+$') then
  return redis.error_reply('the order register ' .. KEYS[13] .. ' holds text that is not a whole number')
end
if held and tonumber(held) > 9007199254740991 then
  return redis.error_reply('the order register ' .. KEYS[13] .. ' holds a number above 9007199254740991 (2^53-1), the highest order redlock writes')
end
if ARGV[2] == '1' and (not held or tonumber(ARGV[1]) >= tonumber(held)) then
  redis.call('SET', KEYS[13], ARGV[1], 'PX', ARGV[3])
end
return held
",
        bit(&ORDER),
    )
});

/// What one master's register held, from its ORDER answer: `Ok(None)` for none, and an error
/// for an answer that is no register (a failed master counts as one that did not answer).
pub(in crate::lock) fn register(answer: &Result<Reply, NodeError>) -> Result<Option<u64>, ()> {
    match answer {
        Ok(Reply::Nil) => Ok(None),
        Ok(Reply::Bulk(bytes)) => std::str::from_utf8(bytes)
            .ok()
            .and_then(|text| text.parse().ok())
            .filter(|&order| order <= MAX_ORDER)
            .map(Some)
            .ok_or(()),
        Ok(_) | Err(_) => Err(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_register_is_a_whole_number_or_none() {
        let bulk = |text: &str| Ok(Reply::Bulk(text.as_bytes().to_vec()));
        assert_eq!(register(&Ok(Reply::Nil)), Ok(None));
        assert_eq!(register(&bulk("103")), Ok(Some(103)));
        assert_eq!(register(&bulk("-1")), Err(()));
        assert_eq!(register(&bulk("1e3")), Err(()));
        assert_eq!(register(&bulk("9007199254740991")), Ok(Some(MAX_ORDER)));
        assert_eq!(register(&bulk("9007199254740992")), Err(()));
        assert_eq!(register(&bulk("99999999999999999999")), Err(()));
        assert_eq!(register(&Ok(Reply::Int(3))), Err(()));
        assert_eq!(register(&Err(NodeError::Timeout)), Err(()));
    }

    #[test]
    fn the_script_refuses_registers_above_the_largest_order() {
        assert!(ORDER.code.contains(&format!("> {MAX_ORDER} then")));
    }

    #[test]
    fn the_largest_order_is_exact_in_lua() {
        // 2^53 - 1 and 2^53 - 2 differ as doubles; 2^53 and 2^53 + 1 would not.
        assert_ne!(MAX_ORDER as f64, (MAX_ORDER - 1) as f64);
        assert_eq!((MAX_ORDER + 1) as f64, (MAX_ORDER + 2) as f64);
    }
}
