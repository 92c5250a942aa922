//! The binary's side of the `log` facade: diagnostics on stderr.
//!
//! The library (`lock/`, `supervise/`) and the commands report through the `log` macros, with
//! key-value fields where a machine reader wants them (`event`, `key`, `master`,
//! `elapsed_ms`, `outcome`, ...); they never write to stderr themselves. This logger decides
//! what is shown and how:
//! - errors and warnings always; `info` with `-v`; `debug` (per-master detail) with `-vv`;
//! - as text, `redlock: MESSAGE`, one line each: a message may quote what a master sent, so
//!   every line goes through `crate::escape` (a control character cannot end it early or
//!   drive the terminal);
//! - or, with `--log-format json`, one JSON object per line:
//!   `{"time": ..., "level": ..., "message": ..., <every field of the record>}`.
//!
//! The level and format are set once at start-up and read with relaxed atomics, so a disabled
//! message costs a load and a branch. A closed stderr is not an error worth dying for.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use log::{Level, LevelFilter, Log, Metadata, Record};

use crate::escape;

static JSON: AtomicBool = AtomicBool::new(false);

struct Logger;

static LOGGER: Logger = Logger;

/// Installs the logger (once; later calls only change the settings): 0 errors and warnings
/// only, 1 progress (`-v`), 2 per-master detail (`-vv`); and whether lines are JSON.
pub fn configure(verbosity: u8, json: bool) {
    // Fails only when a logger is already installed: this one, from an earlier call.
    let _ = log::set_logger(&LOGGER);
    JSON.store(json, Ordering::Relaxed);
    log::set_max_level(match verbosity {
        0 => LevelFilter::Warn,
        1 => LevelFilter::Info,
        _ => LevelFilter::Debug,
    });
}

impl Log for Logger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let line = if JSON.load(Ordering::Relaxed) {
            let mut object = serde_json::Map::new();
            object.insert(
                "time".into(),
                humantime::format_rfc3339_micros(SystemTime::now())
                    .to_string()
                    .into(),
            );
            object.insert("level".into(), level_name(record.level()).into());
            object.insert("message".into(), record.args().to_string().into());
            let mut fields = Fields(&mut object);
            let _ = record.key_values().visit(&mut fields);
            format!("{}\n", escape::json(&object))
        } else {
            format!("redlock: {}\n", escape::visible(&record.args().to_string()))
        };
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }

    fn flush(&self) {}
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Error => "error",
        Level::Warn => "warn",
        Level::Info => "info",
        Level::Debug | Level::Trace => "debug",
    }
}

/// Copies a record's key-value fields into a JSON object: numbers and booleans as such,
/// anything else as its text.
struct Fields<'a>(&'a mut serde_json::Map<String, serde_json::Value>);

impl<'kvs> log::kv::VisitSource<'kvs> for Fields<'_> {
    fn visit_pair(
        &mut self,
        key: log::kv::Key<'kvs>,
        value: log::kv::Value<'kvs>,
    ) -> Result<(), log::kv::Error> {
        let json = if let Some(n) = value.to_u64() {
            n.into()
        } else if let Some(n) = value.to_i64() {
            n.into()
        } else if let Some(b) = value.to_bool() {
            b.into()
        } else if let Some(x) = value.to_f64() {
            x.into()
        } else {
            value.to_string().into()
        };
        self.0.insert(key.as_str().to_string(), json);
        Ok(())
    }
}
