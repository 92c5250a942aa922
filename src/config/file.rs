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
    /// Where each of its keys is, for errors about a value.
    pub places: Places,
    /// True when other users may read the file (checked when it holds a secret).
    pub readable_by_others: bool,
}

/// Where each top-level key of a config file is written, so that an error about a value (a
/// TTL too short, a bad server URL) names the file and the line to fix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Places {
    path: PathBuf,
    /// Each top-level key and its line (from 1).
    lines: Vec<(String, usize)>,
}

impl Places {
    /// The keys of `text`, the config file at `path` (which parsed): a line `key = ...` before
    /// the first table header. A quoted key is not found: its errors name the file alone.
    pub fn of(path: &Path, text: &str) -> Places {
        let lines = text
            .lines()
            .enumerate()
            .map(|(i, line)| (i + 1, line.trim_start()))
            .take_while(|(_, line)| !line.starts_with('['))
            .filter_map(|(number, line)| {
                let (key, _) = line.split_once('=')?;
                let key = key.trim_end();
                let bare = !key.is_empty()
                    && key
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                bare.then(|| (key.to_string(), number))
            })
            .collect();
        Places {
            path: path.to_path_buf(),
            lines,
        }
    }

    /// `config file /etc/redlock/config.toml, line 3`: where `key` is written.
    pub fn of_key(&self, key: &str) -> String {
        match self.lines.iter().find(|(k, _)| k == key) {
            Some((_, line)) => format!("config file {}, line {line}", self.path.display()),
            None => format!("config file {}", self.path.display()),
        }
    }

    /// `config file /etc/redlock/config.toml, line 3: `ttl``, to start an error about its value.
    pub fn key(&self, key: &str) -> String {
        format!("{}: `{key}`", self.of_key(key))
    }
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
            // A FIFO or a device is refused again when it is opened (see `files`), but named
            // here for what it is.
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_file() => path,
                Ok(meta) => {
                    return Err(Failure::config(format!(
                        "config file {} (from {source}): {}",
                        path.display(),
                        crate::files::NotRegular::of(meta.file_type())
                    )));
                }
                Err(_) => {
                    return Err(Failure::config(format!(
                        "config file {} (from {source}) does not exist or is not a file; fix \
                         the path or create it",
                        path.display()
                    )));
                }
            }
        }
        // Something there that is not a file (a FIFO) is not skipped as if missing: it is
        // refused when read, so that a config that is not being used says so.
        None => match usual_locations().into_iter().find(|p| p.exists()) {
            Some(path) => path,
            None => return Ok(None),
        },
    };
    let unreadable =
        |why: String| Failure::config(format!("cannot read config file {}: {why}", path.display()));
    let bytes =
        crate::files::read_bounded(&path, 1024 * 1024).map_err(|e| unreadable(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))?;
    let config: FileConfig = toml::from_str(&text).map_err(|e| {
        // The message may quote the rejected value: a server URL, with its password.
        let why = crate::lock::redact_quoted(e.message().trim());
        // Lines are counted by the breaks before the error: `lines()` of the text before it
        // is one short when the error starts a line (an unknown or a duplicate key).
        let line = e
            .span()
            .map(|span| format!(" at line {}", text[..span.start].matches('\n').count() + 1))
            .unwrap_or_default();
        Failure::config(format!(
            "config file {} is invalid{line}: {why}",
            path.display()
        ))
    })?;
    Ok(Some(Loaded {
        readable_by_others: super::secrets::readable_by_others(&path),
        places: Places::of(&path, &text),
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
