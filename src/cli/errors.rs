//! clap's errors as one line: what is wrong, and where to read more.

use super::Cli;

/// Renders a clap error as one line: what is wrong, and where to read more.
/// `subcommand` is the one named on the command line, if any, for the pointer to its help.
pub fn one_line(error: &clap::Error, subcommand: Option<&str>) -> String {
    let rendered = error.render().to_string();
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut message = lines
        .next()
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string();
    for line in lines {
        if line.starts_with("Usage: ") || line.starts_with("For more information") {
            continue;
        } else if message.ends_with(':') {
            message.push(' ');
            message.push_str(line);
        } else if line.starts_with('-') || line.starts_with('<') {
            message.push_str(", ");
            message.push_str(line);
        } else if line.starts_with("tip: a similar") && names_hidden_subcommand(line) {
            // clap suggests hidden subcommands too (`renew-while` -> `__renew-while`).
            continue;
        } else if line.starts_with("[possible values") || line.starts_with("tip: a similar") {
            // What would have been right: worth the room on the line.
            message.push_str(if line.starts_with('[') { " " } else { "; " });
            message.push_str(line);
        }
    }
    match subcommand {
        Some(name) => format!("{message}; see 'redlock {name} --help'"),
        None => format!("{message}; see 'redlock --help'"),
    }
}

/// Whether `text` quotes the name of a hidden subcommand, as clap's tips quote names.
fn names_hidden_subcommand(text: &str) -> bool {
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .filter(|sub| sub.is_hide_set())
        .any(|sub| text.contains(&format!("'{}'", sub.get_name())))
}

/// The subcommand named in `args` (the first word that is one), for error messages.
pub fn subcommand_in(args: &[String]) -> Option<String> {
    use clap::CommandFactory;
    let command = Cli::command();
    args.iter()
        .skip(1)
        .find(|arg| command.find_subcommand(arg.as_str()).is_some())
        .cloned()
}
