//! `redlock doctor`: ask every master what Redlock's safety depends on ([`Redlock::probe`]),
//! judge it ([`checks`]; a Redis Cluster and its shards in [`cluster`]), and report.
//!
//! [`Redlock::probe`]: crate::lock::Redlock::probe

mod checks;
mod cluster;
mod report;
mod server;

use std::fmt::Write;

use serde_json::json;

use crate::cli::{DoctorArgs, GlobalArgs};
use crate::config;
use crate::escape;
use crate::exit::{self, Failure};
use crate::lock::Probe;
use crate::plural::counted;
use report::{Finding, Report, Severity};

use super::{open_client, output};

pub fn doctor(global: &GlobalArgs, args: DoctorArgs) -> Result<i32, Failure> {
    let context = config::context(global)?;
    let timeout = config::node_timeout(args.node_timeout, &context.defaults)?;
    context.warn();
    let client = open_client(&context)?;

    let reports: Vec<Report> = client.probe(timeout).into_iter().map(report).collect();

    let per_master: Vec<Vec<Finding>> = reports
        .iter()
        .map(|report| match &report.cluster {
            Some(facts) => cluster::check(report, facts),
            None => checks::check_master(report),
        })
        .collect();
    let per_shard: Vec<Vec<Vec<Finding>>> = reports
        .iter()
        .map(|report| shards(report).map(cluster::check_shard).collect())
        .collect();
    let mut overall = checks::check_cluster(&reports);
    overall.extend(cluster::failover_exposure(&reports));
    let all = per_master
        .iter()
        .flatten()
        .chain(per_shard.iter().flatten().flatten())
        .chain(&overall);
    let errors = all
        .clone()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = all.filter(|f| f.severity == Severity::Warning).count();

    let output = if args.json {
        let masters: Vec<_> = reports
            .iter()
            .zip(&per_master)
            .zip(&per_shard)
            .map(|((report, findings), shard_findings)| {
                let mut entry = server_json(report, findings);
                entry["cluster"] = report.cluster.as_ref().map_or(json!(null), |facts| {
                    let shards: Vec<_> = facts
                        .shards
                        .iter()
                        .zip(shard_findings)
                        .map(|(shard, findings)| {
                            let mut entry = server_json(&shard.report, findings);
                            entry["primary"] = json!(shard.primary);
                            entry["slots"] = json!(shard.slots);
                            entry["replicas"] = json!(shard.replicas);
                            entry
                        })
                        .collect();
                    json!({
                        "state": facts.info.get("cluster_state"),
                        "slots_served": facts.slots_served,
                        "shards": shards,
                    })
                });
                entry
            })
            .collect();
        format!(
            "{}\n",
            escape::json(&json!({
                "ok": errors == 0,
                "errors": errors,
                "warnings": warnings,
                "masters": masters,
                "checks": overall.iter().map(finding_json).collect::<Vec<_>>(),
            }))
        )
    } else {
        let mut out = String::new();
        for ((report, findings), shard_findings) in reports.iter().zip(&per_master).zip(&per_shard)
        {
            let _ = writeln!(out, "{}", report.server);
            for finding in findings {
                let _ = writeln!(out, "  {}", finding_text(finding));
            }
            for (shard, findings) in shards(report).zip(shard_findings) {
                // Addresses and findings quote what the masters said: escaped.
                let _ = writeln!(out, "  {}", escape::visible(&shard.title()));
                for finding in findings {
                    let _ = writeln!(out, "    {}", finding_text(finding));
                }
            }
        }
        let _ = writeln!(out, "all masters");
        for finding in &overall {
            let _ = writeln!(out, "  {}", finding_text(finding));
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

/// A cluster master's shards (none for a server).
fn shards(report: &Report) -> impl Iterator<Item = &report::ShardReport> {
    report.cluster.iter().flat_map(|facts| &facts.shards)
}

/// What a server (a master, or a cluster's primary) reported, for `--json`.
fn server_json(report: &Report, findings: &[Finding]) -> serde_json::Value {
    // Nothing to name where INFO was not answered.
    let software = report
        .unreachable
        .is_none()
        .then(|| server::recognise(&report.info_text));
    json!({
        "server": report.server,
        "reachable": report.unreachable.is_none() || report.answered,
        "rtt_ms": report.unreachable.is_none().then_some(report.rtt.as_secs_f64() * 1000.0),
        "server_name": software.as_ref().map(|s| s.name.title()),
        "server_version": software.as_ref().and_then(|s| s.version.clone()),
        "role": report.info.get("role"),
        "version": report.info.get("redis_version"),
        "run_id": report.info.get("run_id"),
        "maxmemory_policy": report.info.get("maxmemory_policy"),
        "aof_enabled": report.info.get("aof_enabled").map(|v| v == "1"),
        "appendfsync": report.appendfsync,
        "clock_offset_ms": report.clock_offset_ms,
        "checks": findings.iter().map(finding_json).collect::<Vec<_>>(),
    })
}

/// `warning  MESSAGE`, the message escaped: it may quote a master's answers (INFO fields).
fn finding_text(finding: &Finding) -> String {
    format!(
        "{:<8} {}",
        finding.severity.name(),
        escape::visible(&finding.message)
    )
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
            report.info_text = facts.info_text;
            report.appendfsync = facts.appendfsync;
            report.clock_offset_ms = facts.clock_offset_ms;
            report.scripts_refused = facts.scripts_refused;
            report.publish_refused = facts.publish_refused;
            report.subscribe_refused = facts.subscribe_refused;
            report.notices_on_kept_connection = facts.notices_on_kept_connection;
        }
        Err(error) => {
            report.answered = error.answered();
            report.unreachable = Some(error.to_string());
        }
    }
    report.cluster = probe
        .cluster
        .map(|facts| cluster::report(facts, self::report));
    report
}
