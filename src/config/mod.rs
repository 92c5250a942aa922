//! From flags, environment and config file to validated settings. Clap types stop here:
//! everything past this module works with checked values, and every rejection is one line
//! naming the option and what to do, with exit code 64 (usage) or 78 (configuration).
//!
//! Precedence, for every setting: flag > environment > config file > built-in default.

pub mod env;
pub mod file;
pub mod note;
pub mod secrets;
mod settings;
pub mod tls;

pub use settings::*;
use settings::{validate_drift_factor, validate_ttl};

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::cli::{
    AcquireArgs, ExtendArgs, ForceArgs, Format, GlobalArgs, LockArgs, RunArgs, TokenArgs,
    parse_duration,
};
use crate::exit::{self, Failure};
use crate::lock::{Master, Timing};
use crate::supervise;
use tls::TlsPaths;

/// The environment variable with the server list.
pub const SERVERS_ENV: &str = "REDLOCK_SERVERS";
/// Where redlock looks when nothing names a server.
pub const DEFAULT_SERVER: &str = "redis://127.0.0.1:6379";
/// The TTL when neither flag nor config file gives one.
pub const DEFAULT_TTL: Duration = Duration::from_secs(30);
/// The per-node timeout of commands that have no TTL to derive it from.
pub const DEFAULT_NODE_TIMEOUT: Duration = Duration::from_secs(1);

/// Where a setting came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Flag(&'static str),
    Env(&'static str),
    File,
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag(name) => f.write_str(name),
            Source::Env(name) => write!(f, "${name}"),
            Source::File => f.write_str("config file"),
            Source::Default => f.write_str("default"),
        }
    }
}

/// A value and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

fn sourced<T>(value: T, source: Source) -> Sourced<T> {
    Sourced { value, source }
}

/// Defaults for lock options, from the config file or built in.
#[derive(Clone, Debug, PartialEq)]
pub struct Defaults {
    pub ttl: Sourced<Duration>,
    pub node_timeout: Option<Sourced<Duration>>,
    pub drift_factor: Sourced<f64>,
    pub kill_after: Option<Sourced<Duration>>,
    /// Where `run`, `acquire` and `release` add their metrics (see `metrics`).
    pub metrics_file: Option<Sourced<PathBuf>>,
    /// Where the config file's values are written, for errors found when they meet the flags.
    pub file: Option<file::Places>,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            ttl: sourced(DEFAULT_TTL, Source::Default),
            node_timeout: None,
            drift_factor: sourced(Timing::DEFAULT_DRIFT_FACTOR, Source::Default),
            kill_after: None,
            metrics_file: None,
            file: None,
        }
    }
}

/// What every command that talks to masters shares.
pub struct Context {
    pub masters: Vec<Master>,
    pub servers_from: Source,
    /// TLS client settings, built when some master is `rediss://`.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    pub tls_paths: TlsPaths,
    pub config_file: Option<PathBuf>,
    /// Where the password for masters without one in their URL came from.
    pub password_from: Option<String>,
    pub defaults: Defaults,
    /// Warnings found while resolving (exposed secrets). Printed by [`Context::warn`] once the
    /// command's input is accepted, so that a rejection stays one line.
    warnings: Vec<String>,
}

impl Context {
    /// Prints the warnings found while resolving; call once the input is validated.
    pub fn warn(&self) {
        for warning in &self.warnings {
            log::warn!("{warning}");
        }
    }
}

/// Resolves the shared settings. Warnings (a password on the command line, a secret readable by
/// others) are kept for [`Context::warn`].
pub fn context(global: &GlobalArgs) -> Result<Context, Failure> {
    let mut warnings = Vec::new();
    let loaded = file::load(global.config.as_deref())?;
    let (file_config, config_file, places, file_exposed) = match loaded {
        Some(l) => (l.config, Some(l.path), Some(l.places), l.readable_by_others),
        None => (file::FileConfig::default(), None, None, false),
    };

    let (urls, servers_from) =
        server_urls(global, file_config.servers.as_deref(), places.as_ref())?;
    if file_exposed
        && let Some(path) = &config_file
        && (file_config
            .servers
            .iter()
            .flatten()
            .any(|u| has_password(u)))
    {
        warnings.push(secrets::exposed(path, "config file"));
    }
    if matches!(servers_from, Source::Flag(_)) && urls.iter().any(|u| has_password(u)) {
        warnings.push(
            "warning: a password given with --server is visible to other users in the process \
             list; put it in $REDLOCK_SERVERS, the config file, or --password-file instead"
                .to_string(),
        );
    }
    let password = password(global, &file_config, &mut warnings)?;
    // A bad URL from the config file is named with the file and the line of `servers`.
    let servers_described = match (&servers_from, &places) {
        (Source::File, Some(places)) => places.of_key("servers"),
        (source, _) => source.to_string(),
    };
    let mut masters = parse_masters(&urls, &servers_described)?;
    if let Some((password, _)) = &password {
        let username = file_config.username.as_deref();
        masters = masters
            .into_iter()
            .map(|m| m.with_credentials(username, password))
            .collect();
    }

    let file_tls = file_config.tls.clone().unwrap_or_default();
    let tls_paths = TlsPaths {
        ca_cert: global.tls_ca_cert.clone().or(file_tls.ca_cert),
        cert: global.tls_cert.clone().or(file_tls.cert),
        key: global.tls_key.clone().or(file_tls.key),
    };
    let tls = if masters.iter().any(Master::is_tls) {
        Some(tls::client_config(&tls_paths)?)
    } else {
        None
    };

    Ok(Context {
        masters,
        servers_from,
        tls,
        tls_paths,
        config_file,
        password_from: password.map(|(_, from)| from),
        defaults: defaults(&file_config, places)?,
        warnings,
    })
}

/// The server URLs and where they came from.
fn server_urls(
    global: &GlobalArgs,
    from_file: Option<&[String]>,
    places: Option<&file::Places>,
) -> Result<(Vec<String>, Source), Failure> {
    // Read (and refused if unreadable) even when --server wins: see `env`.
    let from_env = env::text(SERVERS_ENV)?;
    if !global.servers.is_empty() {
        return Ok((global.servers.clone(), Source::Flag("--server")));
    }
    if let Some(value) = from_env {
        let urls: Vec<String> = value
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if urls.is_empty() {
            return Err(Failure::config(format!(
                "${SERVERS_ENV} is set but empty: list one or more redis:// URLs, or unset it"
            )));
        }
        return Ok((urls, Source::Env(SERVERS_ENV)));
    }
    if let Some(urls) = from_file {
        if urls.is_empty() {
            let key = places.map_or_else(|| "config file: `servers`".into(), |p| p.key("servers"));
            return Err(Failure::config(format!(
                "{key} is an empty list: list one or more redis:// URLs"
            )));
        }
        return Ok((urls.to_vec(), Source::File));
    }
    Ok((vec![DEFAULT_SERVER.to_string()], Source::Default))
}

/// Parses the URLs and rejects the same master listed twice (it would fake a quorum). A bad
/// URL is named by its place in the list as well, since it is shown redacted.
fn parse_masters(urls: &[String], source: &str) -> Result<Vec<Master>, Failure> {
    let mut masters = Vec::with_capacity(urls.len());
    let mut seen = HashMap::new();
    for (i, url) in urls.iter().enumerate() {
        let master = Master::parse(url).map_err(|e| {
            let entry = if urls.len() > 1 {
                format!("entry {} of {}, ", i + 1, urls.len())
            } else {
                String::new()
            };
            Failure::config(format!(
                "invalid server URL {} ({entry}from {source}): {}",
                e.url, e.reason
            ))
        })?;
        if let Some(first) = seen.insert(master.identity(), master.to_string()) {
            return Err(Failure::config(format!(
                "{first} and {master} are the same master (from {source}): a master listed \
                 twice would count twice toward the quorum; list each master once"
            )));
        }
        masters.push(master);
    }
    Ok(masters)
}

/// The masters from flags and environment only (no config file): for the detached renewer,
/// which is handed exactly what its parent resolved.
pub fn masters(flags: &[String]) -> Result<Vec<Master>, Failure> {
    let global = GlobalArgs {
        servers: flags.to_vec(),
        ..GlobalArgs::default()
    };
    let (urls, source) = server_urls(&global, None, None)?;
    parse_masters(&urls, &source.to_string())
}

/// Whether a server URL carries a password; for one that does not parse, whether it has
/// anything that redaction would hide.
fn has_password(url: &str) -> bool {
    Master::parse(url).map_or_else(
        |_| crate::lock::redact_url(url) != url,
        |master| master.has_password(),
    )
}

/// The password for masters whose URL has none, and a description of where it came from.
fn password(
    global: &GlobalArgs,
    file_config: &file::FileConfig,
    warnings: &mut Vec<String>,
) -> Result<Option<(String, String)>, Failure> {
    // Read (and refused if unreadable) even when a password file wins: see `env`.
    let from_env = env::text(secrets::PASSWORD_ENV)?;
    let mut from_file = |path: PathBuf, source: String| -> Result<(String, String), Failure> {
        let password = secrets::read_password_file(&path, &source)?;
        if secrets::readable_by_others(&path) {
            warnings.push(secrets::exposed(&path, "password file"));
        }
        Ok((
            password,
            format!("password file {} ({source})", path.display()),
        ))
    };
    if let Some(path) = &global.password_file {
        return from_file(path.clone(), "--password-file".into()).map(Some);
    }
    if let Some(path) = std::env::var_os(secrets::PASSWORD_FILE_ENV) {
        let source = format!("${}", secrets::PASSWORD_FILE_ENV);
        if path.is_empty() {
            return Err(Failure::config(format!(
                "{source} is set but empty: name the password file, or unset it"
            )));
        }
        return from_file(PathBuf::from(path), source).map(Some);
    }
    if let Some(password) = from_env {
        if password.is_empty() {
            return Err(Failure::config(format!(
                "${} is set but empty: set the password, or unset it",
                secrets::PASSWORD_ENV
            )));
        }
        return Ok(Some((password, format!("${}", secrets::PASSWORD_ENV))));
    }
    if let Some(path) = &file_config.password_file {
        return from_file(path.clone(), "config file".into()).map(Some);
    }
    Ok(None)
}

/// A rejected value: a usage error naming the flag when it came from one, a configuration
/// error naming the config file, the line and the key when it came from there (`file`).
fn rejected(file: Option<&file::Places>, flag: &str, key: &str, value: &str, why: &str) -> Failure {
    match file {
        Some(places) => Failure::config(format!("{} {value} {why}", places.key(key))),
        None => Failure::usage(format!("{flag} {value} {why}")),
    }
}

/// Lock defaults from the config file, each checked on its own (combinations are checked
/// where they meet the flags); `places` tells where its keys are written.
fn defaults(
    file_config: &file::FileConfig,
    places: Option<file::Places>,
) -> Result<Defaults, Failure> {
    let places = places.unwrap_or_default();
    let duration = |text: &Option<String>, name: &str| -> Result<Option<Duration>, Failure> {
        text.as_deref()
            .map(|t| {
                // The message quotes the value: if a URL landed here by mistake, redacted.
                parse_duration(t).map_err(|e| {
                    Failure::config(format!(
                        "{}: {}",
                        places.key(name),
                        crate::lock::redact_quoted(&e)
                    ))
                })
            })
            .transpose()
    };
    let mut defaults = Defaults::default();
    if let Some(ttl) = duration(&file_config.ttl, "ttl")? {
        validate_ttl(ttl, Some(&places))?;
        defaults.ttl = sourced(ttl, Source::File);
    }
    defaults.node_timeout =
        duration(&file_config.node_timeout, "node_timeout")?.map(|d| sourced(d, Source::File));
    if defaults
        .node_timeout
        .as_ref()
        .is_some_and(|d| d.value.is_zero())
    {
        return Err(Failure::config(format!(
            "{} must be above zero, e.g. \"1s\"",
            places.key("node_timeout")
        )));
    }
    defaults.kill_after =
        duration(&file_config.kill_after, "kill_after")?.map(|d| sourced(d, Source::File));
    if let Some(path) = &file_config.metrics_file {
        if path.as_os_str().is_empty() {
            return Err(Failure::config(format!(
                "{} is empty: name a file, e.g. \
                 \"/var/lib/node_exporter/textfile/redlock.prom\", or remove the line",
                places.key("metrics_file")
            )));
        }
        defaults.metrics_file = Some(sourced(path.clone(), Source::File));
    }
    if let Some(factor) = file_config.drift_factor {
        validate_drift_factor(factor, Some(&places))?;
        defaults.drift_factor = sourced(factor, Source::File);
    }
    defaults.file = Some(places);
    Ok(defaults)
}

#[cfg(test)]
mod tests;
