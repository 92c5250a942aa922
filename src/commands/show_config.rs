//! `redlock config`: the settings redlock would use, and where each comes from.

use std::fmt::Write;
use std::path::Path;

use serde_json::json;

use crate::cli::{ConfigArgs, GlobalArgs};
use crate::config::{self, Source, Sourced};
use crate::exit::{self, Failure};
use crate::lock::Master;

use super::output;

pub fn show_config(global: &GlobalArgs, args: ConfigArgs) -> Result<i32, Failure> {
    let context = config::context(global)?;
    context.warn();
    let defaults = &context.defaults;
    let path =
        |p: &Option<std::path::PathBuf>| p.as_deref().map(Path::display).map(|d| d.to_string());
    let servers: Vec<String> = context.masters.iter().map(Master::to_string).collect();
    let duration = |d: &Sourced<std::time::Duration>| {
        (config::show(d.value).to_string(), d.source.to_string())
    };
    let derived = |d: &Option<Sourced<std::time::Duration>>, rule: &str| match d {
        Some(d) => duration(d),
        None => (rule.to_string(), Source::Default.to_string()),
    };
    let ttl = duration(&defaults.ttl);
    let node_timeout = derived(&defaults.node_timeout, "TTL/20, between 10ms and 1s");
    let kill_after = derived(&defaults.kill_after, "5s, or TTL/4 if shorter");
    let drift = (
        defaults.drift_factor.value.to_string(),
        defaults.drift_factor.source.to_string(),
    );
    let uses_tls = context.masters.iter().any(Master::is_tls);
    let metrics_file = defaults.metrics_file.as_ref().map_or_else(
        || ("none".to_string(), Source::Default.to_string()),
        |m| (m.value.display().to_string(), m.source.to_string()),
    );

    let output = if args.json {
        let setting = |(value, source): (String, String)| json!({"value": value, "source": source});
        format!(
            "{}\n",
            crate::escape::json(&json!({
                "config_file": path(&context.config_file),
                "servers": {"urls": servers, "source": context.servers_from.to_string()},
                "password": context.password_from,
                "tls": {
                    "used": uses_tls,
                    "ca_cert": path(&context.tls_paths.ca_cert),
                    "cert": path(&context.tls_paths.cert),
                    "key": path(&context.tls_paths.key),
                },
                "ttl": setting(ttl),
                "node_timeout": setting(node_timeout),
                "drift_factor": setting(drift),
                "kill_after": setting(kill_after),
                "metrics_file": {
                    "value": defaults.metrics_file.as_ref().map(|m| m.value.display().to_string()),
                    "source": metrics_file.1,
                },
            }))
        )
    } else {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{:<13} {}",
            "config file",
            path(&context.config_file).unwrap_or_else(|| "none".into())
        );
        let _ = writeln!(out, "{:<13} ({})", "servers", context.servers_from);
        for server in &servers {
            let _ = writeln!(out, "  {server}");
        }
        let _ = writeln!(
            out,
            "{:<13} {}",
            "password",
            context
                .password_from
                .as_deref()
                .unwrap_or("none (or in the server URLs)")
        );
        if uses_tls {
            let show =
                |p: &Option<std::path::PathBuf>, none: &str| path(p).unwrap_or_else(|| none.into());
            let _ = writeln!(
                out,
                "{:<13} ca {}, client cert {}, key {}",
                "tls",
                show(&context.tls_paths.ca_cert, "system trust store"),
                show(&context.tls_paths.cert, "none"),
                show(&context.tls_paths.key, "none")
            );
        }
        for (name, (value, source)) in [
            ("ttl", ttl),
            ("node_timeout", node_timeout),
            ("drift_factor", drift),
            ("kill_after", kill_after),
            ("metrics_file", metrics_file.clone()),
        ] {
            let _ = writeln!(out, "{name:<13} {value} ({source})");
        }
        out
    };
    output::print(&output)?;
    Ok(exit::OK)
}
