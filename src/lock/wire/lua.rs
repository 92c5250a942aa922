//! A Lua script as the transport runs it: its source, its SHA1 for EVALSHA, and its bit in a
//! connection's mask of scripts already loaded there. The scripts themselves are in `scripts`.
//!
//! The SHA1 comes from `sha1_smol`: a small, dependency-free implementation (the one redis-rs
//! itself uses for scripts), computed once per script per process. Writing SHA1 ourselves
//! would be code to get right for no gain; taking redis-rs's `Script` for it would keep a
//! redis-rs feature only for one hash.

/// A script's source and its SHA1, for EVALSHA with an EVAL fallback.
pub struct Lua {
    pub code: &'static str,
    /// Lower-case hex, as Redis names a cached script.
    pub sha: String,
    /// This script's bit in a connection's mask of loaded scripts.
    pub bit: u32,
}

impl Lua {
    pub(in crate::lock) fn new(code: &'static str, bit: u32) -> Lua {
        let sha = sha1_smol::Sha1::from(code).digest().to_string();
        Lua { code, sha, bit }
    }

    /// A script made of `parts` (shared Lua functions, then the body), joined once per process.
    pub(in crate::lock) fn composed(parts: &[&str], bit: u32) -> Lua {
        // Leaked once per script per process: scripts live as long as the process anyway, and
        // the transport wants `&'static str` sources.
        let code: &'static str = parts.concat().leak();
        Lua::new(code, bit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sha_is_the_one_redis_names_the_script_by() {
        // `redis-cli SCRIPT LOAD "return 1"` answers this.
        let lua = Lua::new("return 1", 1);
        assert_eq!(lua.sha, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
        // And redis-rs, which the tests' own clients use, agrees, for a script of many lines.
        let body =
            "local n = redis.call('INCR', KEYS[1])\nif n > 1 then\n  return n\nend\nreturn 0\n";
        assert_eq!(Lua::new(body, 1).sha, redis::Script::new(body).get_hash());
    }
}
