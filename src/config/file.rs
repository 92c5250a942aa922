//! The configuration file: where it is looked for, and its shape.
//!
//! TOML, every key optional:
//!
//! ```toml
//! servers = ["redis://r1:6379", "redis://r2:6379", "rediss://r3:6380"]
//! username = "locker"                        # ACL user for masters whose URL names none
//! password_file = "/etc/redlock/password"    # for masters whose URL carries no password
//! ttl = "30s"
//! node_timeout = "500ms"
//! drift_factor = 0.01
//! kill_after = "5s"
//! metrics_file = "/var/lib/node_exporter/textfile/redlock.prom"   # run, acquire, release
//!
//! [tls]
//! ca_cert = "/etc/redlock/ca.pem"
//! cert = "/etc/redlock/client.pem"           # client certificate, with key
//! key = "/etc/redlock/client.key"
//! ```
//!
//! Looked for at `--config PATH`, then `$REDLOCK_CONFIG`, then
//! `$XDG_CONFIG_HOME/redlock/config.toml` (default `~/.config/redlock/config.toml`), then
//! `/etc/redlock/config.toml`. A file named by `--config` or `$REDLOCK_CONFIG` must exist; the
//! usual locations are used only when they do.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::exit::Failure;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub servers: Option<Vec<String>>,
    pub username: Option<String>,
    pub password_file: Option<PathBuf>,
    pub ttl: Option<String>,
    pub node_timeout: Option<String>,
    pub drift_factor: Option<f64>,
    pub kill_after: Option<String>,
    pub metrics_file: Option<PathBuf>,
    pub tls: Option<TlsFiles>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TlsFiles {
    pub ca_cert: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

/// Where a config file was found, and what it says.
pub struct Loaded {
    pub path: PathBuf,
    pub config: FileConfig,
    /// True when other users may read the file (checked when it holds a secret).
    pub readable_by_others: bool,
}

/// The environment variable naming a config file.
pub const CONFIG_ENV: &str = "REDLOCK_CONFIG";

/// Finds and parses the config file, if any.
pub fn load(flag: Option<&Path>) -> Result<Option<Loaded>, Failure> {
    if flag.is_none() && std::env::var_os(CONFIG_ENV).is_some_and(|p| p.is_empty()) {
        return Err(Failure::config(format!(
            "${CONFIG_ENV} is set but empty: name the config file, or unset it"
        )));
    }
    let named = flag
        .map(|p| (p.to_path_buf(), "--config"))
        .or_else(|| std::env::var_os(CONFIG_ENV).map(|p| (PathBuf::from(p), "$REDLOCK_CONFIG")));
    let path = match named {
        Some((path, source)) => {
            if !path.is_file() {
                return Err(Failure::config(format!(
                    "config file {} (from {source}) does not exist or is not a file; fix the \
                     path or create it",
                    path.display()
                )));
            }
            path
        }
        None => match usual_locations().into_iter().find(|p| p.is_file()) {
            Some(path) => path,
            None => return Ok(None),
        },
    };
    let unreadable =
        |why: String| Failure::config(format!("cannot read config file {}: {why}", path.display()));
    let bytes = super::read_bounded(&path, 1024 * 1024).map_err(|e| unreadable(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))?;
    let config: FileConfig = toml::from_str(&text).map_err(|e| {
        // The message may quote the rejected value: a server URL, with its password.
        let why = crate::lock::redact_quoted(e.message().trim());
        let line = e
            .span()
            .map(|span| format!(" at line {}", text[..span.start].lines().count().max(1)))
            .unwrap_or_default();
        Failure::config(format!(
            "config file {} is invalid{line}: {why}",
            path.display()
        ))
    })?;
    Ok(Some(Loaded {
        readable_by_others: super::secrets::readable_by_others(&path),
        path,
        config,
    }))
}

/// The user's and the system's config file, in that order.
pub fn usual_locations() -> Vec<PathBuf> {
    let user = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")));
    user.map(|dir| dir.join("redlock").join("config.toml"))
        .into_iter()
        .chain([PathBuf::from("/etc/redlock/config.toml")])
        .collect()
}
