//! Which Redis Cluster hash slot a key lives in, by the cluster's own rule: CRC16 (XMODEM) of
//! its hash tag (after the first `{`, up to the next `}`, when not empty) or else of the whole
//! key, mod 16384. The cluster routes by it (`cluster`), and the key layout puts every key of a
//! lock in its lock's slot by it (`scripts::keys`).

/// The hash tag of `key`, as Redis Cluster finds it: after the first `{`, up to the next `}`,
/// when that is not empty.
pub(in crate::lock) fn hash_tag(key: &str) -> Option<&str> {
    let open = key.find('{')?;
    let rest = &key[open + 1..];
    let close = rest.find('}')?;
    (close > 0).then(|| &rest[..close])
}

/// The Redis Cluster slot of a key: CRC16 (XMODEM) of its hash tag or of the whole key, mod 16384.
pub fn key_slot(key: &str) -> u16 {
    slot(hash_tag(key).unwrap_or(key).as_bytes())
}

pub(in crate::lock) fn slot(bytes: &[u8]) -> u16 {
    const CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM);
    CRC16.checksum(bytes) % 16384
}

/// The smallest decimal number whose slot is `wanted`: a hash tag that puts a name there.
pub(in crate::lock) fn tag_for_slot(wanted: u16) -> String {
    (0u32..)
        .map(|n| n.to_string())
        .find(|n| slot(n.as_bytes()) == wanted % 16384)
        .expect("decimal numbers cover every slot")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_redis_cluster() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(CRC16_CHECK, 0x31C3);
        assert_eq!(key_slot("foo"), 12182);
        assert_eq!(key_slot("{user1000}.following"), key_slot("user1000"));
        assert_eq!(key_slot("foo{}{bar}"), slot(b"foo{}{bar}"));
        assert_eq!(key_slot("foo{{bar}}zap"), slot(b"{bar"));
        assert_eq!(key_slot("foo{bar}{zap}"), slot(b"bar"));
    }

    const CRC16_CHECK: u16 = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM).checksum(b"123456789");
}
