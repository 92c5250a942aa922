//! The parts of a server URL's scheme that redlock reads itself, before redis-rs parses the
//! rest (see `master`): `rediss://` and Valkey's `valkeys://` (TLS, spoken by our own rustls in
//! `node`, so redis-rs never needs its TLS stack), Valkey's `valkey://` (`redis://`), and
//! `redis+cluster://` / `rediss+cluster://`: the master is a whole Redis Cluster, reached
//! through the node the URL names (see `cluster`).
//!
//! Why the user says "cluster" in the URL rather than redlock finding out from the server
//! (INFO's `cluster_enabled`, or the first MOVED reply):
//! 1. **Every host must agree.** Release notices go over sharded pub/sub on a cluster
//!    (SPUBLISH/SSUBSCRIBE on the node that owns the key's slot) and over plain pub/sub on a
//!    server. A releaser and a waiter that judged the same URL differently (one saw MOVED for
//!    its key, the other's key happened to live on the node named) would miss each other's
//!    notices. The URL, written once in the configuration, is the same everywhere.
//! 2. **No extra round trip.** Detection costs a question on every invocation, before the
//!    first request; a scheme costs nothing, and a plain server pays nothing for clusters.
//! 3. **A mistake is named, not guessed around.** A cluster node given as `redis://` answers
//!    MOVED for keys it does not own: redlock reports that (see `cause`: "use
//!    redis+cluster://"), and `doctor` flags it from `cluster_enabled`, rather than quietly
//!    changing what the URL means.
//!
//! This is what the Redis clients users already know do: `redis-cli -c`, and a cluster
//! client type chosen explicitly in redis-rs, go-redis, Jedis and Lettuce.

/// What a URL's scheme says beyond "Redis at this address".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::lock) struct Scheme {
    pub tls: bool,
    pub cluster: bool,
}

const INSECURE: &str = "TLS without certificate verification (#insecure) is not supported: drop \
                        #insecure and pass --tls-ca-cert with the CA that signed the server's \
                        certificate";

impl Scheme {
    /// `url` as the `redis://` URL redis-rs parses (or as it is, for the schemes redis-rs
    /// reads itself), and what its scheme said; an error for what no scheme allows.
    pub(in crate::lock) fn split(url: &str) -> Result<(String, Scheme), &'static str> {
        // `valkey://` and `valkeys://` are Valkey's names for `redis://` and `rediss://`
        // (redis-rs takes them too, but its TLS is not built in: ours speaks it).
        let schemes = [
            ("rediss+cluster://", true, true),
            ("redis+cluster://", false, true),
            ("rediss://", true, false),
            ("valkeys://", true, false),
            ("valkey://", false, false),
        ];
        let Some((rest, tls, cluster)) = schemes
            .iter()
            .find_map(|&(prefix, tls, cluster)| Some((url.strip_prefix(prefix)?, tls, cluster)))
        else {
            return Ok((url.to_string(), Scheme::default()));
        };
        if tls && url.ends_with("#insecure") {
            return Err(INSECURE);
        }
        Ok((format!("redis://{rest}"), Scheme { tls, cluster }))
    }

    /// What the rest of a URL with this scheme may not say, given what redis-rs made of it.
    pub(in crate::lock) fn check(self, db: i64) -> Result<(), &'static str> {
        if self.cluster && db != 0 {
            return Err("a Redis Cluster has only database 0: drop the /N or ?db=N from the URL");
        }
        Ok(())
    }

    /// The scheme as written in a URL, without `://`.
    pub(in crate::lock) fn name(self) -> &'static str {
        match (self.tls, self.cluster) {
            (false, false) => "redis",
            (true, false) => "rediss",
            (false, true) => "redis+cluster",
            (true, true) => "rediss+cluster",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_split_into_what_redis_rs_parses_and_what_they_say() {
        let split = |url: &str| Scheme::split(url).unwrap();
        let plain = Scheme::default();
        let tls = Scheme {
            tls: true,
            cluster: false,
        };
        let cluster = Scheme {
            tls: false,
            cluster: true,
        };
        let both = Scheme {
            tls: true,
            cluster: true,
        };
        assert_eq!(split("redis://h:1"), ("redis://h:1".into(), plain));
        assert_eq!(split("redis+unix:///s"), ("redis+unix:///s".into(), plain));
        assert_eq!(
            split("rediss://u:p@h:1/2"),
            ("redis://u:p@h:1/2".into(), tls)
        );
        assert_eq!(
            split("redis+cluster://h:1"),
            ("redis://h:1".into(), cluster)
        );
        assert_eq!(split("rediss+cluster://h:1"), ("redis://h:1".into(), both));
        assert_eq!(split("valkey://h:1/2"), ("redis://h:1/2".into(), plain));
        assert_eq!(split("valkeys://u:p@h:1"), ("redis://u:p@h:1".into(), tls));
        for scheme in [plain, tls, cluster, both] {
            let url = format!("{}://h:1", scheme.name());
            assert_eq!(split(&url).1, scheme, "{url}");
        }
    }

    #[test]
    fn what_schemes_refuse() {
        assert!(Scheme::split("rediss+cluster://h:1/#insecure").is_err());
        assert!(Scheme::split("rediss://h:1/#insecure").is_err());
        assert!(Scheme::split("valkeys://h:1/#insecure").is_err());
        let cluster = Scheme::split("redis+cluster://h:1/2").unwrap().1;
        assert!(cluster.check(2).unwrap_err().contains("database 0"));
        assert!(cluster.check(0).is_ok());
        assert!(Scheme::default().check(2).is_ok());
    }

    #[test]
    fn a_cluster_master_shows_its_scheme_and_counts_by_its_address() {
        use crate::lock::wire::master::Master;
        let m = Master::parse("rediss+cluster://u:pw@db1:7000").unwrap();
        assert!(m.is_cluster() && m.is_tls());
        assert_eq!(m.to_string(), "rediss+cluster://u:***@db1:7000");
        let plain = Master::parse("redis://db1:7000").unwrap();
        assert!(!plain.is_cluster());
        // The same address under both schemes is the same server: listed twice, it is refused.
        let cluster = Master::parse("redis+cluster://db1:7000").unwrap();
        assert_eq!(cluster.identity(), plain.identity());
        let err = Master::parse("redis+cluster://:secret@db1:7000/3").unwrap_err();
        assert!(err.to_string().contains("database 0"), "{err}");
        assert!(!err.to_string().contains("secret"), "{err}");
    }
}
