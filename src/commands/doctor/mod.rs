//! `redlock doctor`: ask every master what Redlock's safety depends on ([`Redlock::probe`]),
//! judge it ([`checks`]), and report.
//!
//! [`Redlock::probe`]: crate::lock::Redlock::probe

mod checks;

use std::fmt::Write;

use serde_json::json;

use crate::cli::{DoctorArgs, GlobalArgs};
use crate::config;
use crate::exit::{self, Failure};
use crate::lock::Probe;
use checks::{Finding, Report, Severity};

use super::{open_client, output};

pub fn doctor(global: &GlobalArgs, args: DoctorArgs) -> Result<i32, Failure> {
    let context = config::context(global)?;
    let timeout = config::node_timeout(args.node_timeout, &context.defaults)?;
    context.warn();
    let client = open_client(&context)?;

    let reports: Vec<Report> = client.probe(timeout).into_iter().map(report).collect();

    let per_master: Vec<Vec<Finding>> = reports.iter().map(checks::check_master).collect();
    let cluster = checks::check_cluster(&reports);
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
    output::print(&output)?;
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

/// A probe, as the checks read it.
fn report(probe: Probe) -> Report {
    let mut report = Report {
        server: probe.master.to_string(),
        rtt: probe.rtt,
        ..Report::default()
    };
    match probe.facts {
        Ok(facts) => {
            report.info = facts.info;
            report.appendfsync = facts.appendfsync;
            report.clock_offset_ms = facts.clock_offset_ms;
            report.scripts_refused = facts.scripts_refused;
            report.publish_refused = facts.publish_refused;
            report.subscribe_refused = facts.subscribe_refused;
        }
        Err(error) => report.unreachable = Some(error.to_string()),
    }
    report
}
