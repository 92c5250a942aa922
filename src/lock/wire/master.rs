//! One Redis master: where it is, how to log in, and how to name it without leaking a password.
//!
//! The invariant: no message shows a server URL as written. A URL that parses is shown rebuilt
//! from its parts with the password as `***` (`Display`); one that does not is shown through
//! [`redact_url`], which hides anything shaped like a secret without needing to parse it, and
//! the parser's own words are dropped if they show any piece that was hidden.
//!
//! URLs are parsed by redis-rs (its `IntoConnectionInfo`), the one thing redlock still takes
//! from it: the accepted forms, percent-decoding, `?db=`/`?user=`/`?pass=` for sockets and
//! the error cases are its, and hand-written they would only drift from what users of other
//! Redis tools expect. Not its silence: it drops a query parameter it does not know, and
//! redlock refuses one (see [`database`]). What it parsed is copied at once into [`Address`]
//! and [`Login`], so no redis-rs type goes further than [`Master::parse`].

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use redis::{ConnectionAddr, IntoConnectionInfo};

use super::scheme::Scheme;

mod redact;

pub use redact::{redact_quoted, redact_url};
use redact::{redaction, shows_any};

/// A master given as a URL: `redis://[user:pass@]host:port[/db]`, `rediss://...` (TLS),
/// `redis+unix:///path/to/socket`, or `redis+cluster://` / `rediss+cluster://` (a cluster).
#[derive(Clone)]
pub struct Master {
    address: Address,
    login: Login,
    /// The URL as shown to users: the password replaced by `***`.
    display: String,
    /// The URL as given, password included: only ever handed to another redlock process
    /// through its environment, never printed.
    url: String,
    /// Credentials that came from elsewhere (a password file, the config file), if any.
    injected: Option<(Option<String>, String)>,
    /// `redis+cluster://`: a whole Redis Cluster, reached through this address.
    cluster: bool,
}

/// Where a master listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::lock) enum Address {
    /// `redis://` (`tls: false`) or `rediss://` (`tls: true`).
    Tcp { host: String, port: u16, tls: bool },
    /// `redis+unix://`.
    Unix(PathBuf),
}

/// How to log in once connected: `AUTH [username] password` when there is a password, then
/// `SELECT db` when it is not 0.
#[derive(Clone, Default, PartialEq, Eq)]
pub(in crate::lock) struct Login {
    pub(in crate::lock) username: Option<String>,
    pub(in crate::lock) password: Option<String>,
    pub(in crate::lock) db: i64,
}

/// Why a server URL was rejected.
#[derive(Debug, thiserror::Error)]
#[error("invalid server URL {url}: {reason}")]
pub struct BadUrl {
    /// The URL with any password redacted.
    pub url: String,
    pub reason: String,
}

/// The port written in `url` (`scheme://[userinfo@]host:port[/db]`) when it is a number that is
/// no TCP port, which the URL parser reports only as "did not parse".
fn port_out_of_range(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split('/').next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let port = host_port.rsplit_once(':')?.1;
    let number: u64 = port.parse().ok()?;
    (number == 0 || number > 65535).then_some(port)
}

/// The database `url` names (parsed by redis-rs already, `plain` as `Scheme::split` gave it),
/// from its path (`/2`) or its query (`?db=2`), and an error for any query parameter redlock
/// does not use. redis-rs reads `?db=` only for a socket and drops whatever it does not know
/// from a TCP URL; redis-py and most clients read `redis://h:6379?db=2` as database 2. Two
/// hosts spelling the same lock `/2` and `?db=2` would then lock in two databases, and both
/// hold it: so every parameter is either used or refused, and a database named twice must be
/// the same. `redacted` is the URL as shown: a parameter's name is shown only if it is there.
fn database(plain: &str, unix: bool, redacted: &str) -> Result<i64, String> {
    let Some(parsed) = redis::parse_redis_url(plain) else {
        // redis-rs took it a moment ago; nothing to read, so nothing refused.
        return Ok(0);
    };
    let mut named: Vec<(String, i64)> = Vec::new();
    let path = parsed.path().trim_matches('/');
    // A socket's path is the socket's, not a database.
    if !unix && !path.is_empty() {
        let db = path
            .parse()
            .map_err(|_| "the database (/N) must be a number")?;
        named.push((format!("/{path}"), db));
    }
    for (name, value) in parsed.query_pairs() {
        match name.as_ref() {
            "db" => {
                let db = value.parse().map_err(|_| {
                    "?db= takes a database number, e.g. ?db=2 (or write it as /2)".to_string()
                })?;
                named.push((format!("?db={value}"), db));
            }
            // redis-rs logs in with these on a socket, where a URL has no user part.
            "user" | "pass" if unix => {}
            _ => return Err(unknown_parameter(&name, unix, redacted)),
        }
    }
    if let Some((first, db)) = named.first()
        && let Some((other, _)) = named.iter().find(|(_, other)| other != db)
    {
        return Err(format!(
            "it names two databases, {first} and {other}: name the database once"
        ));
    }
    Ok(named.first().map_or(0, |(_, db)| *db))
}

/// The refusal of query parameter `name`, which redlock does not read: named only where the
/// redacted URL shows it as a name (`?name=***`; a bare `?s3cret` may be a password, and is
/// hidden), with where the setting goes instead.
fn unknown_parameter(name: &str, unix: bool, redacted: &str) -> String {
    let shown = ["?", "&"]
        .iter()
        .any(|before| redacted.contains(&format!("{before}{name}=")));
    let named = if name.is_empty() || !shown {
        "a query parameter".to_string()
    } else {
        format!("query parameter {name:?}")
    };
    let known = if unix {
        "?db=, ?user= and ?pass="
    } else {
        "?db="
    };
    let instead = match name {
        "password" | "pass" | "user" | "username" | "auth" => {
            "; put the login before the host (redis://user:password@host:port), or the password \
             in --password-file or $REDLOCK_PASSWORD"
        }
        "timeout" | "connect_timeout" | "read_timeout" | "socket_timeout" => {
            "; set the per-master timeout with --node-timeout or node_timeout in the config file"
        }
        _ => "",
    };
    format!("{named} is not understood (redlock reads only {known}): remove it{instead}")
}

impl Master {
    /// Parses a server URL. The error never contains the password.
    pub fn parse(url: &str) -> Result<Master, BadUrl> {
        let url = url.trim();
        let bad = |reason: String| BadUrl {
            url: redact_url(url),
            reason,
        };
        // The URL parser would drop a newline or a tab and percent-encode a space: the
        // server or password used would not be the one written.
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad(
                "it contains a space or a control character (a line break?): remove it, or \
                 percent-encode it in a password (%20 for a space)"
                    .into(),
            ));
        }
        if !url.contains("://") {
            return Err(bad(
                "expected redis://host:port, rediss://host:port or redis+unix:///path".into(),
            ));
        }
        // TLS and cluster schemes are ours to read (see `scheme`); redis-rs parses the rest.
        let (plain, scheme) = Scheme::split(url).map_err(|why| bad(why.into()))?;
        let tls = scheme.tls;
        let info = plain.as_str().into_connection_info().map_err(|e| {
            // redis-rs says "Redis URL did not parse - InvalidClientConfig": keep the first
            // half (a fixed description), unless it shows a piece of the URL that is hidden
            // from the user, and say what a good URL looks like.
            let why = e.to_string();
            let why = why.split(" - ").next().unwrap_or_default();
            let port_range;
            let why = if let Some(port) = port_out_of_range(plain.as_str()) {
                port_range = format!("port {port} is out of range (1 to 65535)");
                port_range.as_str()
            } else if shows_any(why, &redaction(url).1) {
                "it does not parse"
            } else {
                why
            };
            bad(format!(
                "{why}; expected redis://[user:pass@]host:port[/db], rediss://... or \
                 redis+unix:///path"
            ))
        })?;
        let settings = info.redis_settings();
        let unix = matches!(info.addr(), ConnectionAddr::Unix(_));
        let login = Login {
            username: settings.username().map(str::to_string),
            password: settings.password().map(str::to_string),
            db: database(&plain, unix, &redaction(url).0).map_err(bad)?,
        };
        if login.db < 0 {
            return Err(bad("the database number must be 0 or more".into()));
        }
        scheme.check(login.db).map_err(|why| bad(why.into()))?;
        let address = match info.addr() {
            ConnectionAddr::Tcp(_, 0) => {
                return Err(bad("port 0 is out of range (1 to 65535)".into()));
            }
            ConnectionAddr::Tcp(host, port) => Address::Tcp {
                host: host.clone(),
                port: *port,
                tls,
            },
            ConnectionAddr::Unix(path) => Address::Unix(path.clone()),
            other => {
                return Err(bad(format!(
                    "unsupported address {other}: use redis://, rediss:// or redis+unix://"
                )));
            }
        };
        if let Address::Tcp { host, .. } = &address
            && host.is_empty()
        {
            return Err(bad("the host is missing".into()));
        }
        let display = display_of(&address, &login, scheme.cluster);
        Ok(Master {
            address,
            login,
            display,
            url: url.to_string(),
            injected: None,
            cluster: scheme.cluster,
        })
    }

    /// Adds credentials from outside the URL (a password file, `$REDLOCK_PASSWORD`, the config
    /// file) to a master whose URL carries no password; a URL's own password wins.
    pub fn with_credentials(mut self, username: Option<&str>, password: &str) -> Master {
        if self.has_password() {
            return self;
        }
        self.login.password = Some(password.to_string());
        if self.login.username.is_none() {
            self.login.username = username.map(str::to_string);
        }
        self.display = display_of(&self.address, &self.login, self.cluster);
        self.injected = Some((self.login.username.clone(), password.to_string()));
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
        matches!(self.address, Address::Tcp { tls: true, .. })
    }

    /// A Redis Cluster (`redis+cluster://`), counted as one master.
    pub fn is_cluster(&self) -> bool {
        self.cluster
    }

    /// The URL as given, secrets included. For passing to a child redlock process through
    /// its environment; never for display.
    pub fn url_with_secrets(&self) -> &str {
        &self.url
    }

    pub(in crate::lock) fn address(&self) -> &Address {
        &self.address
    }

    pub(in crate::lock) fn login(&self) -> &Login {
        &self.login
    }

    /// What identifies the server process behind this address, for catching the same master
    /// listed twice (which would fake a quorum). The database number and credentials do not
    /// count: `redis://h:1/0` and `redis://h:1/1` are the same master.
    pub fn identity(&self) -> Identity {
        match &self.address {
            Address::Tcp { host, port, .. } => Identity::Tcp(normalize_host(host), *port),
            Address::Unix(path) => {
                Identity::Unix(std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()))
            }
        }
    }

    pub fn has_password(&self) -> bool {
        self.login.password.is_some()
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
/// resolver with it, when redlock connects): one to four numbers, each decimal, octal (`0`
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

fn display_of(address: &Address, login: &Login, cluster: bool) -> String {
    let credentials = match (login.username.as_deref(), login.password.as_deref()) {
        (Some(user), Some(_)) => format!("{user}:***@"),
        (None, Some(_)) => ":***@".to_string(),
        (Some(user), None) => format!("{user}@"),
        (None, None) => String::new(),
    };
    let db = match login.db {
        0 => String::new(),
        db => format!("/{db}"),
    };
    match address {
        Address::Tcp { host, port, tls } => {
            let scheme = Scheme { tls: *tls, cluster }.name();
            // redis-rs keeps an IPv6 host without its brackets (it connects with it so), and
            // `redis://::1:6379` is no URL anyone could paste back.
            let host = if host.contains(':') {
                format!("[{host}]")
            } else {
                host.clone()
            };
            format!("{scheme}://{credentials}{host}:{port}{db}")
        }
        Address::Unix(path) => {
            let db = if db.is_empty() {
                db
            } else {
                format!("?db={}", login.db)
            };
            format!("redis+unix://{credentials}{}{db}", path.display())
        }
    }
}

#[cfg(test)]
mod tests;
