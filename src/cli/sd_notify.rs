//! `run --sd-notify`: who speaks systemd's notify protocol once the command runs.

use clap::Args;

#[derive(Debug, Args)]
pub struct NotifyArgs {
    /// Under systemd (NOTIFY_SOCKET set), who tells it that the service is ready. redlock:
    /// READY=1 once the lock is held and the command started, STATUS= lines, and WATCHDOG=1
    /// while renewals keep a majority (with WatchdogSec=); the command does not see
    /// NOTIFY_SOCKET. command: the command gets NOTIFY_SOCKET and WATCHDOG_USEC and sends
    /// READY=1 and WATCHDOG=1 itself (the unit needs NotifyAccess=all).
    #[arg(long, value_name = "WHO", value_enum, default_value_t = SdNotify::Redlock)]
    pub sd_notify: SdNotify,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SdNotify {
    /// redlock speaks for the service.
    Redlock,
    /// The command speaks for itself, and runs only while the lock is held.
    Command,
}
