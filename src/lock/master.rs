//! One Redis master: where it is, how to log in, and how to name it without leaking a password.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo};

/// A master given as a URL: `redis://[user:pass@]host:port[/db]`, `rediss://...` (TLS) or
/// `redis+unix:///path/to/socket`.
#[derive(Clone)]
pub struct Master {
    info: ConnectionInfo,
    /// The URL as shown to users: the password replaced by `***`.
    display: String,
    /// The URL as given, password included: only ever handed to another redlock process
    /// through its environment, never printed.
    url: String,
    /// Credentials that came from elsewhere (a password file, the config file), if any.
    injected: Option<(Option<String>, String)>,
}

/// Why a server URL was rejected.
#[derive(Debug, thiserror::Error)]
#[error("invalid server URL {url}: {reason}")]
pub struct BadUrl {
    /// The URL with any password redacted.
    pub url: String,
    pub reason: String,
}

impl Master {
    /// Parses a server URL. The error never contains the password.
    pub fn parse(url: &str) -> Result<Master, BadUrl> {
        let url = url.trim();
        let bad = |reason: String| BadUrl {
            url: redact_url(url),
            reason,
        };
        if !url.contains("://") {
            return Err(bad(
                "expected redis://host:port, rediss://host:port or redis+unix:///path".into(),
            ));
        }
        // redis-rs parses rediss:// only with its own TLS stack compiled in; ours is rustls in
        // `node`, so parse the URL as redis:// and mark the address as TLS ourselves.
        let tls = url.starts_with("rediss://");
        if tls && url.ends_with("#insecure") {
            return Err(bad(
                "TLS without certificate verification (#insecure) is not supported: drop \
                 #insecure and pass --tls-ca-cert with the CA that signed the server's certificate"
                    .into(),
            ));
        }
        let plain = if tls {
            format!("redis://{}", &url["rediss://".len()..])
        } else {
            url.to_string()
        };
        let mut info = plain.as_str().into_connection_info().map_err(|e| {
            // redis-rs says "Redis URL did not parse - InvalidClientConfig": keep the first
            // half, and say what a good URL looks like.
            let why = e.to_string();
            let why = why.split(" - ").next().unwrap_or_default();
            bad(format!(
                "{}; expected redis://[user:pass@]host:port[/db], rediss://... or \
                 redis+unix:///path",
                strip_secrets(why, url)
            ))
        })?;
        if info.redis_settings().db() < 0 {
            return Err(bad("the database number must be 0 or more".into()));
        }
        if tls && let ConnectionAddr::Tcp(host, port) = info.addr().clone() {
            info = info.set_addr(ConnectionAddr::TcpTls {
                host,
                port,
                insecure: false,
                tls_params: None,
            });
        }
        if let ConnectionAddr::Tcp(host, _) | ConnectionAddr::TcpTls { host, .. } = info.addr()
            && host.is_empty()
        {
            return Err(bad("the host is missing".into()));
        }
        let display = display_of(&info);
        Ok(Master {
            info,
            display,
            url: url.to_string(),
            injected: None,
        })
    }

    /// Adds credentials from outside the URL (a password file, `$REDLOCK_PASSWORD`, the config
    /// file) to a master whose URL carries no password; a URL's own password wins.
    pub fn with_credentials(mut self, username: Option<&str>, password: &str) -> Master {
        if self.has_password() {
            return self;
        }
        let mut settings = self.info.redis_settings().clone().set_password(password);
        let username = self
            .info
            .redis_settings()
            .username()
            .map(str::to_string)
            .or_else(|| username.map(str::to_string));
        if let Some(user) = &username {
            settings = settings.set_username(user);
        }
        self.info = self.info.set_redis_settings(settings);
        self.display = display_of(&self.info);
        self.injected = Some((username, password.to_string()));
        self
    }

    /// The credentials added with [`Master::with_credentials`], for handing to a child redlock
    /// process through its environment; never for display.
    pub fn injected_credentials(&self) -> Option<(Option<&str>, &str)> {
        self.injected
            .as_ref()
            .map(|(user, password)| (user.as_deref(), password.as_str()))
    }

    pub fn is_tls(&self) -> bool {
        matches!(self.info.addr(), ConnectionAddr::TcpTls { .. })
    }

    /// The URL as given, secrets included. For passing to a child redlock process through
    /// its environment; never for display.
    pub fn url_with_secrets(&self) -> &str {
        &self.url
    }

    pub fn connection_info(&self) -> &ConnectionInfo {
        &self.info
    }

    /// What identifies the server process behind this address, for catching the same master
    /// listed twice (which would fake a quorum). The database number and credentials do not
    /// count: `redis://h:1/0` and `redis://h:1/1` are the same master.
    pub fn identity(&self) -> Identity {
        match self.info.addr() {
            ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
                Identity::Tcp(normalize_host(host), *port)
            }
            ConnectionAddr::Unix(path) => {
                Identity::Unix(std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()))
            }
            other => Identity::Other(format!("{other:?}")),
        }
    }

    pub fn has_password(&self) -> bool {
        self.info.redis_settings().password().is_some()
    }
}

impl fmt::Display for Master {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display)
    }
}

impl fmt::Debug for Master {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Master({})", self.display)
    }
}

/// The server behind an address, see [`Master::identity`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Identity {
    Tcp(String, u16),
    Unix(PathBuf),
    /// An address kind this version of redis-rs added after we were written.
    Other(String),
}

/// One spelling per address, so that the same master written two ways is caught: host names
/// lower-cased; IP addresses in their standard form, including the old forms the system's
/// resolver also takes (`127.1`, `2130706433`, `0x7f000001`, `0177.0.0.1`) and IPv4 written as
/// IPv6 (`::ffff:127.0.0.1`); `localhost` and both loopback addresses as one.
fn normalize_host(host: &str) -> String {
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let ip = host.parse::<IpAddr>().ok().or_else(|| old_ipv4_form(&host));
    let ip = match ip {
        Some(IpAddr::V6(v6)) => Some(v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4)),
        other => other,
    };
    match ip {
        Some(ip) if ip == Ipv4Addr::LOCALHOST || ip == Ipv6Addr::LOCALHOST => {
            "loopback".to_string()
        }
        Some(ip) => ip.to_string(),
        None if host == "localhost" => "loopback".to_string(),
        None => host,
    }
}

/// An IPv4 address in one of the forms `inet_aton` accepts beyond the dotted quad (and the
/// resolver with it, when redis-rs connects): one to four numbers, each decimal, octal (`0`
/// prefix) or hex (`0x`), the last one filling the bytes left. Only parses, never looks up.
fn old_ipv4_form(host: &str) -> Option<IpAddr> {
    let parts: Vec<u32> = host
        .split('.')
        .map(|part| {
            let (digits, radix) = if let Some(hex) = part.strip_prefix("0x") {
                (hex, 16)
            } else if part.len() > 1 && part.starts_with('0') {
                (&part[1..], 8)
            } else {
                (part, 10)
            };
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            u32::from_str_radix(digits, radix).ok()
        })
        .collect::<Option<_>>()?;
    let (last, leading) = parts.split_last()?;
    if leading.len() > 3 || leading.iter().any(|&byte| byte > 0xff) {
        return None;
    }
    let last_bits = 32 - 8 * leading.len() as u32;
    if last_bits < 32 && *last >= 1 << last_bits {
        return None;
    }
    let high = leading
        .iter()
        .enumerate()
        .fold(0u32, |acc, (i, &byte)| acc | byte << (24 - 8 * i as u32));
    Some(IpAddr::V4(Ipv4Addr::from(high | last)))
}

fn display_of(info: &ConnectionInfo) -> String {
    let settings = info.redis_settings();
    let credentials = match (settings.username(), settings.password()) {
        (Some(user), Some(_)) => format!("{user}:***@"),
        (None, Some(_)) => ":***@".to_string(),
        (Some(user), None) => format!("{user}@"),
        (None, None) => String::new(),
    };
    let db = match settings.db() {
        0 => String::new(),
        db => format!("/{db}"),
    };
    match info.addr() {
        ConnectionAddr::Tcp(host, port) => format!("redis://{credentials}{host}:{port}{db}"),
        ConnectionAddr::TcpTls { host, port, .. } => {
            format!("rediss://{credentials}{host}:{port}{db}")
        }
        ConnectionAddr::Unix(path) => {
            let db = if db.is_empty() {
                db
            } else {
                format!("?db={}", settings.db())
            };
            format!("redis+unix://{credentials}{}{db}", path.display())
        }
        other => format!("{other}"),
    }
}

/// Redacts the password of a URL that may not even parse, for error messages.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let mut out = match rest[..authority_end].rfind('@') {
        Some(at) => {
            let userinfo = &rest[..at];
            let user = userinfo.split(':').next().unwrap_or("");
            let redacted = if userinfo.contains(':') {
                format!("{user}:***")
            } else {
                user.to_string()
            };
            format!("{}://{redacted}{}", &url[..scheme_end], &rest[at..])
        }
        None => url.to_string(),
    };
    // Unix socket URLs carry the password as a query parameter.
    if let Some(start) = out.find("pass=") {
        let value_start = start + "pass=".len();
        let value_end = out[value_start..]
            .find('&')
            .map_or(out.len(), |i| value_start + i);
        out.replace_range(value_start..value_end, "***");
    }
    out
}

/// Removes anything that could be the password from a parser's error message.
fn strip_secrets(message: &str, url: &str) -> String {
    let mut message = message.to_string();
    if let Some(scheme_end) = url.find("://") {
        let rest = &url[scheme_end + 3..];
        if let Some(at) = rest.find('@')
            && let Some((_, password)) = rest[..at].split_once(':')
            && !password.is_empty()
        {
            message = message.replace(password, "***");
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_never_shows_the_password() {
        let m = Master::parse("redis://alice:s3cret@db1:6380/2").unwrap();
        assert_eq!(m.to_string(), "redis://alice:***@db1:6380/2");
        assert!(!format!("{m:?}").contains("s3cret"));
        let m = Master::parse("redis://:s3cret@db1:6380").unwrap();
        assert_eq!(m.to_string(), "redis://:***@db1:6380");
    }

    #[test]
    fn redact_url_handles_unparsable_urls() {
        assert_eq!(
            redact_url("redis://bob:pw@h:notaport"),
            "redis://bob:***@h:notaport"
        );
        assert_eq!(
            redact_url("redis+unix:///tmp/r.sock?pass=pw&db=1"),
            "redis+unix:///tmp/r.sock?pass=***&db=1"
        );
        assert_eq!(redact_url("redis://h:1"), "redis://h:1");
    }

    #[test]
    fn same_master_under_two_spellings_has_one_identity() {
        let a = Master::parse("redis://localhost:6379/0").unwrap();
        let b = Master::parse("redis://127.0.0.1:6379/3").unwrap();
        let c = Master::parse("redis://127.0.0.1:6380").unwrap();
        assert_eq!(a.identity(), b.identity());
        assert_ne!(a.identity(), c.identity());
    }

    #[test]
    fn every_spelling_of_an_ip_address_has_one_identity() {
        let identity = |url: &str| Master::parse(url).unwrap().identity();
        for same in [
            "redis://127.1:6379",
            "redis://2130706433:6379",
            "redis://0x7f000001:6379",
            "redis://127.000.000.001:6379",
            "redis://[::ffff:127.0.0.1]:6379",
            "redis://[::1]:6379",
            "redis://LOCALHOST:6379",
        ] {
            assert_eq!(identity(same), identity("redis://127.0.0.1:6379"), "{same}");
        }
        for same in ["redis://10.1:6379", "redis://[::ffff:10.0.0.1]:6379"] {
            assert_eq!(identity(same), identity("redis://10.0.0.1:6379"), "{same}");
        }
        assert_eq!(
            identity("redis://[2001:DB8::1]:6379"),
            identity("redis://[2001:db8:0:0:0:0:0:1]:6379")
        );
        assert_ne!(
            identity("redis://10.0.0.1:6379"),
            identity("redis://10.0.0.2:6379")
        );
        // Names are never looked up, only compared.
        assert_eq!(identity("redis://Db1:6379"), identity("redis://db1:6379"));
        assert_ne!(identity("redis://db1:6379"), identity("redis://db2:6379"));
    }

    #[test]
    fn tls_without_verification_is_refused() {
        let err = Master::parse("rediss://h:6380/#insecure").unwrap_err();
        assert!(err.to_string().contains("--tls-ca-cert"), "{err}");
    }

    #[test]
    fn rediss_urls_are_tls_addresses() {
        let m = Master::parse("rediss://u:pw@db1:6380/1").unwrap();
        assert!(m.is_tls());
        assert_eq!(m.to_string(), "rediss://u:***@db1:6380/1");
        assert!(!Master::parse("redis://db1:6380").unwrap().is_tls());
    }

    #[test]
    fn rejects_urls_without_scheme_or_host() {
        assert!(Master::parse("localhost:6379").is_err());
        assert!(Master::parse("redis://").is_err());
        let err = Master::parse("redis://u:topsecret@h:99999").unwrap_err();
        assert!(!err.to_string().contains("topsecret"), "{err}");
    }
}
