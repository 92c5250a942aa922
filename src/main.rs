use std::ffi::OsString;
use std::io::Write;

use clap::{CommandFactory, FromArgMatches};

use redlock_cli::cli::{self, Cli, GlobalArgs};
use redlock_cli::config::env;
use redlock_cli::exit::{self, Failure};
use redlock_cli::stdio;

/// Runs before Rust's runtime starts, which would otherwise hide a closed standard descriptor
/// by opening /dev/null onto it: see `redlock_cli::stdio`.
// SAFETY: `.init_array` holds pointers to functions the loader calls with the C ABI before
// `main`; this is one, taking no arguments it reads and touching only system calls and atomics.
#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly",
    target_os = "illumos",
    target_os = "solaris"
))]
#[used]
#[unsafe(link_section = ".init_array")]
static GUARD_STANDARD_FDS: extern "C" fn() = stdio::guard_standard_fds;

/// The static (musl) build allocates with dlmalloc: musl's own allocator maps and unmaps memory
/// for each new size of allocation, about 150 system calls before the command line was parsed
/// (BENCHMARKS.md, issue 35). glibc's allocator, in the dynamic build, does not.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

fn main() {
    // Errors and warnings as text until the command line says otherwise: nothing may be lost
    // before it is parsed.
    redlock_cli::logger::configure(0, false);
    // Again, for platforms without `.init_array`; a no-op when it ran.
    stdio::guard_standard_fds();
    if stdio::unguarded() {
        // If stderr is the closed one, this goes nowhere; the exit code still says it.
        log::error!(
            "a standard descriptor (stdin, stdout or stderr) is closed and /dev/null cannot be \
             opened in its place; start redlock with all three open"
        );
        std::process::exit(exit::OS_ERROR);
    }
    let args: Vec<OsString> = std::env::args_os().collect();
    // Built once: building clap's command is a good share of a whole `run`.
    let mut definition = Cli::command();
    let parsed = definition
        .try_get_matches_from_mut(&args)
        .and_then(|matches| {
            cli::check_placement(&mut definition, &matches)?;
            Cli::from_arg_matches(&matches)
        })
        .map(|cli| {
            let (global, command) = cli.into_parts();
            configure_log(&global);
            global
                .check()
                // Also when a flag made clap skip the variable: see `config::env`.
                .and_then(|()| env::check_declared(Cli::command, &args))
                .and_then(|()| redlock_cli::commands::dispatch(&global, command))
        });
    if parsed.is_err() && asks_for_json(&args) {
        // Clap failed before it could set the format: a JSON consumer must still get JSON.
        redlock_cli::logger::configure(0, true);
    }
    let code = match parsed {
        Ok(Ok(code)) => code,
        Ok(Err(failure)) => report(&failure),
        // Clap's own words for a variable it read that is not UTF-8 do not name it.
        Err(error) if error.kind() == clap::error::ErrorKind::InvalidUtf8 => {
            match env::check_declared(Cli::command, &args) {
                Err(failure) => report(&failure),
                Ok(()) => usage_error(&error),
            }
        }
        Err(error) => usage_error(&error),
    };
    let _ = std::io::stdout().flush();
    std::process::exit(code);
}

/// Prints a failure's line, if it has one; returns its exit code.
fn report(failure: &Failure) -> i32 {
    if !failure.message.is_empty() {
        log::error!(event = "failure", exit_code = failure.code; "{}", failure.message);
    }
    failure.code
}

/// Whether the command line asks for JSON diagnostics (`--log-format json` before any `--`),
/// for errors found while parsing it.
fn asks_for_json(args: &[OsString]) -> bool {
    let mut words = args.iter().skip(1).take_while(|word| *word != "--");
    while let Some(word) = words.next() {
        if word == "--log-format=json"
            || (word == "--log-format" && words.next().is_some_and(|value| value == "json"))
        {
            return true;
        }
    }
    false
}

fn configure_log(global: &GlobalArgs) {
    let json = global.log_format == redlock_cli::cli::LogFormat::Json;
    redlock_cli::logger::configure(global.verbose, json);
}

/// Prints help and version as clap does; anything else becomes one line and exit code 64.
fn usage_error(error: &clap::Error) -> i32 {
    use clap::error::ErrorKind;
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            use std::io::IsTerminal;
            if std::io::stdout().is_terminal() {
                // In clap's colours.
                let _ = error.print();
                return exit::OK;
            }
            // A closed or full standard output is reported, as for any other output.
            match redlock_cli::commands::print(&error.render().to_string()) {
                Ok(()) => exit::OK,
                Err(failure) => report(&failure),
            }
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let names = redlock_cli::commands::generate::subcommands();
            log::error!(
                "a subcommand is required ({}); see 'redlock --help'",
                names.join(", ")
            );
            exit::USAGE
        }
        _ => {
            // Lossy: an argument that is not UTF-8 must not stop the error from being reported.
            let args: Vec<String> = std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let subcommand = redlock_cli::cli::subcommand_in(&args);
            let line = redlock_cli::cli::one_line(error, subcommand.as_deref());
            log::error!("{line}");
            exit::USAGE
        }
    }
}
