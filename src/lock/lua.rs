//! A Lua script as the transport runs it: its source, its SHA1 for EVALSHA, and its bit in a
//! connection's mask of scripts already loaded there. The scripts themselves are in `scripts`.

/// A script's source and its SHA1, for EVALSHA with an EVAL fallback.
pub struct Lua {
    pub code: &'static str,
    pub sha: String,
    /// This script's bit in a connection's mask of loaded scripts.
    pub bit: u32,
}

impl Lua {
    pub(super) fn new(code: &'static str, bit: u32) -> Lua {
        let sha = redis::Script::new(code).get_hash().to_string();
        Lua { code, sha, bit }
    }
}
