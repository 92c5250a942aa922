//! The integration tests, one test binary with a module per theme (as ripgrep and fd keep
//! theirs): every module drives the real `redlock` binary against real `redis-server`
//! processes that the tests start on loopback (`common`). One binary links once, where 47
//! separate ones linked the crate and its dependencies 47 times; the model checks
//! (`tests/models.rs`) and the package tests (`tests/package.rs`) are binaries of their own.
//!
//! Run one module with `cargo test --test integration faults::`, one test by its name;
//! docs/contributing.md says how to run groups and how to hunt a flaky test.

mod common;

mod bad_input;
mod bad_replies;
mod blocked_steps;
mod ci_cancel;
mod ci_recipes;
mod cluster;
mod config;
mod docs;
mod doctor;
mod doctor_capabilities;
mod doctor_server;
mod drift;
mod error_causes;
mod exit_codes;
mod faults;
mod fencing;
mod force_edges;
mod force_release;
mod force_slots;
mod foreign_bytes;
mod generated;
mod github_action;
mod gitlab_component;
mod harness;
mod history;
mod hostile_input;
mod job_control;
mod json_log;
mod key_layout;
mod list;
mod list_semaphores;
mod messages;
mod metrics;
mod module_graph;
mod note;
mod order;
mod proxy_faults;
mod queue;
mod queue_cleanup;
mod real_causes;
mod release_revoked;
mod revoked_runs;
mod run;
mod run_options;
mod safety;
mod script_cache;
mod scripts;
mod sd_notify;
mod semaphore;
mod shared;
mod shared_review;
mod signals;
mod spawn;
mod status_output;
mod status_watch;
mod stdout_errors;
mod supersede;
mod supersede_late;
mod supervise_faults;
mod systemd_units;
mod terminal;
mod tls;
mod tls_self_signed;
mod transport;
mod undo_order;
mod version;
mod waiting;
mod wakeups;
mod workflow;
