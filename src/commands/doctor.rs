//! `redlock doctor`: ask every master what Redlock's safety depends on, and judge it.

use std::fmt::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::Value;
use serde_json::json;

use crate::cli::{DoctorArgs, GlobalArgs};
use crate::config;
use crate::doctor::{self, Finding, Report, Severity};
use crate::exit::{self, Failure};

use super::common;

pub fn doctor(global: &GlobalArgs, args: DoctorArgs) -> Result<i32, Failure> {
    let context = config::context(global)?;
    let timeout = config::node_timeout(args.node_timeout, &context.defaults)?;
    context.warn();
    let client = common::open_client(&context)?;

    let mut info = redis::cmd("INFO");
    info.arg("server")
        .arg("replication")
        .arg("memory")
        .arg("persistence");
    let mut appendfsync = redis::cmd("CONFIG");
    appendfsync.arg("GET").arg("appendfsync");
    let before_time = SystemTime::now();
    let times = client.query_each(&redis::cmd("TIME"), timeout);
    let infos = client.query_each(&info, timeout);
    let fsyncs = client.query_each(&appendfsync, timeout);

    let reports: Vec<Report> = infos
        .into_iter()
        .zip(times)
        .zip(fsyncs)
        .map(
            |(((master, info, rtt), (_, time, time_rtt)), (_, fsync, _))| {
                let mut report = Report {
                    server: master.to_string(),
                    rtt,
                    ..Report::default()
                };
                match info {
                    Ok(value) => report.info = doctor::parse_info(&text(&value)),
                    Err(error) => report.unreachable = Some(error.to_string()),
                }
                report.appendfsync = fsync.ok().and_then(|v| config_value(&v));
                report.clock_offset_ms = time
                    .ok()
                    .and_then(|v| clock_offset_ms(&v, before_time, time_rtt));
                report
            },
        )
        .collect();

    let per_master: Vec<Vec<Finding>> = reports.iter().map(doctor::check_master).collect();
    let cluster = doctor::check_cluster(&reports);
    let all = per_master.iter().flatten().chain(&cluster);
    let errors = all
        .clone()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = all.filter(|f| f.severity == Severity::Warning).count();

    let output = if args.json {
        let masters: Vec<_> = reports
            .iter()
            .zip(&per_master)
            .map(|(report, findings)| {
                json!({
                    "server": report.server,
                    "reachable": report.unreachable.is_none(),
                    "rtt_ms": report.unreachable.is_none().then_some(report.rtt.as_secs_f64() * 1000.0),
                    "role": report.info.get("role"),
                    "version": report.info.get("redis_version"),
                    "run_id": report.info.get("run_id"),
                    "maxmemory_policy": report.info.get("maxmemory_policy"),
                    "aof_enabled": report.info.get("aof_enabled").map(|v| v == "1"),
                    "appendfsync": report.appendfsync,
                    "clock_offset_ms": report.clock_offset_ms,
                    "checks": findings.iter().map(finding_json).collect::<Vec<_>>(),
                })
            })
            .collect();
        format!(
            "{}\n",
            json!({
                "ok": errors == 0,
                "errors": errors,
                "warnings": warnings,
                "masters": masters,
                "checks": cluster.iter().map(finding_json).collect::<Vec<_>>(),
            })
        )
    } else {
        let mut out = String::new();
        for (report, findings) in reports.iter().zip(&per_master) {
            let _ = writeln!(out, "{}", report.server);
            for finding in findings {
                let _ = writeln!(out, "  {:<8} {}", finding.severity.name(), finding.message);
            }
        }
        let _ = writeln!(out, "all masters");
        for finding in &cluster {
            let _ = writeln!(out, "  {:<8} {}", finding.severity.name(), finding.message);
        }
        let _ = writeln!(
            out,
            "{}, {}",
            counted(errors, "error"),
            counted(warnings, "warning")
        );
        out
    };
    common::print(&output)?;
    Ok(if errors == 0 {
        exit::OK
    } else {
        exit::DOCTOR_FOUND_ERRORS
    })
}

/// "1 error", "2 errors", "0 errors".
fn counted(count: usize, noun: &str) -> String {
    let plural = if count == 1 { "" } else { "s" };
    format!("{count} {noun}{plural}")
}

fn finding_json(finding: &Finding) -> serde_json::Value {
    json!({"check": finding.check, "level": finding.severity.name(), "message": finding.message})
}

fn text(value: &Value) -> String {
    match value {
        Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::SimpleString(s) | Value::VerbatimString { text: s, .. } => s.clone(),
        _ => String::new(),
    }
}

/// The value of a `CONFIG GET` reply: `[name, value]` (RESP2) or a map (RESP3).
fn config_value(value: &Value) -> Option<String> {
    match value {
        Value::Array(items) if items.len() == 2 => Some(text(&items[1])),
        Value::Map(pairs) => pairs.first().map(|(_, v)| text(v)),
        _ => None,
    }
}

/// The master's clock minus ours, from a TIME reply `[seconds, microseconds]`, taking the
/// midpoint of the round trip as the moment it answered.
fn clock_offset_ms(value: &Value, sent: SystemTime, rtt: Duration) -> Option<i64> {
    let Value::Array(items) = value else {
        return None;
    };
    let number = |v: &Value| text(v).parse::<i64>().ok();
    let server_us = number(items.first()?)? * 1_000_000 + number(items.get(1)?)?;
    let local = (sent + rtt / 2).duration_since(UNIX_EPOCH).ok()?;
    let local_us = i64::try_from(local.as_micros()).ok()?;
    Some((server_us - local_us) / 1000)
}
