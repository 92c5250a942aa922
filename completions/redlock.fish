# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_redlock_global_optspecs
    string join \n s/server= config= password-file= tls-ca-cert= tls-cert= tls-key= v/verbose log-format= q/quiet h/help V/version
end

function __fish_redlock_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_redlock_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_redlock_using_subcommand
    set -l cmd (__fish_redlock_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c redlock -n "__fish_redlock_needs_command" -s s -l server -d 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379' -r -f
complete -c redlock -n "__fish_redlock_needs_command" -l config -d 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l password-file -d 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l tls-ca-cert -d 'Trust this CA (PEM) for rediss:// masters instead of the system\'s trust store' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l tls-cert -d 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l log-format -d 'How to write diagnostics on stderr: text (the default), or one JSON object per line' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_needs_command" -s v -l verbose -d 'Say more on stderr: -v what redlock does, -vv what each master answered'
complete -c redlock -n "__fish_redlock_needs_command" -s q -l quiet -d 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it'
complete -c redlock -n "__fish_redlock_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_needs_command" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "run" -d 'Take the lock, run a command while renewing it, release it, and exit with the command\'s status'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "acquire" -d 'Take the lock and print its token, for scripts that release it in a later step'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "release" -d 'Release a lock taken with `acquire`, on every master; or, with --force, revoke whoever holds it'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "extend" -d 'Extend a lock taken with `acquire` to a full TTL again, on a majority of masters'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "status" -d 'Show who holds a lock, master by master, and the verdict; with --watch, a line each time its holder changes'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "history" -d 'Show a lock\'s last turns, newest first: who held it, when, for how long, and how each turn ended (released with the command\'s status, lost, revoked, expired; or never ran: superseded, gave up)'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "list" -d 'List every lock held on the masters, with its holder and queued waiters, and every semaphore (--limit) with its slots; with --problems, also look for leaks'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "doctor" -d 'Check the masters: reachable, which server (Redis, Valkey, KeyDB, Dragonfly, Garnet, Kvrocks) and whether it can hold a lock by itself, a master and not a replica, version, eviction policy, persistence, clock skew, odd N, the same server listed twice'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "config" -d 'Show the settings redlock would use, and where each comes from (passwords redacted)'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "man" -d 'Print the man page (roff), or the page of one subcommand'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "help" -d 'Print the help of redlock, or of one of its subcommands (the same as --help)'
complete -c redlock -n "__fish_redlock_using_subcommand run" -s k -l key -d 'The lock\'s name (the Redis key). Everyone who must not overlap uses the same key' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -s t -l ttl -d 'How long the lock lives on each master without renewal, e.g. 30s, 2m, 500ms. If redlock dies, others wait at most this long. Default: 30s (or `ttl` in the config file)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -s w -l wait -d 'If the lock is taken, wait in line for it (first come, first served) for up to this long before giving up, or `forever`. Default: try once' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l node-timeout -d 'How long one master gets to answer one request, connecting included. Default: TTL/20, between 10ms and 1s' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l drift-factor -d 'Share of the TTL set aside for clock drift between hosts (Redlock\'s drift factor). Default: 0.01' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l conflict-exit-code -d 'Exit with this code instead of 75 when the lock is held elsewhere (0 suits cron jobs that should just skip their turn)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l order -d 'This run\'s order: a number that grows with each run, such as the CI pipeline\'s number. A run whose order is lower than the highest that already took the lock is outdated: it neither waits nor runs, and exits 81. The same order may run again (a retry). Only for a lock (not with --limit or --shared)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l outdated-exit-code -d 'Exit with this code instead of 81 when a higher --order already took the lock (0 counts a skipped deploy as a success)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l superseded-exit-code -d 'Exit with this code instead of 80 when a newer waiter superseded this one (0 counts a skipped deploy as a success)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l limit -d 'Let up to L holders in at once (a counting semaphore) instead of one; L is 1 to 1000. Each holder needs a slot on floor(L*N/(L+1))+1 of the N masters (-v shows it), so fewer masters may be down than for a lock. Every holder of the key must use the same L' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l note -d 'Say why, or for which job, the lock is held: status, list, a conflict and a waiter show it beside the holder. At most 256 bytes. Default: in a CI job (GitHub Actions, GitLab CI, Jenkins, Buildkite), the job\'s URL; --note \'\' gives none' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l history -d 'Record this turn in the key\'s history (`redlock history`), which keeps the last N events of the key on each master, for 30 days after its last use; `off` records nothing. N is 1 to 10000; default 1000' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l kill-after -d 'On lock loss, time between SIGTERM and SIGKILL to the command. Default: 5s, or TTL/4 if shorter; at most TTL/2, so the command is always dead before the validity ends' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l hold-min -d 'Keep the lock at least this long after the start, even if the command ends sooner: the key is left to expire then instead of being deleted (cron on several hosts: the same job fired a moment later elsewhere does not run again)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l max-duration -d 'Stop the command (SIGTERM, then SIGKILL after --kill-after) and release the lock once it has run this long; redlock then exits 124. Caps how long renewal may hold the lock' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l metrics-file -d 'Add what this command saw (seconds waited for the lock, seconds held, the outcome) to this Prometheus text file, for node_exporter\'s textfile collector; merged with what other redlock processes wrote there. Default: `metrics_file` in the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand run" -l sd-notify -d 'Under systemd (NOTIFY_SOCKET set), who tells it that the service is ready. redlock: READY=1 once the lock is held and the command started, STATUS= lines, and WATCHDOG=1 while renewals keep a majority (with WatchdogSec=); the command does not see NOTIFY_SOCKET. command: the command gets NOTIFY_SOCKET and WATCHDOG_USEC and sends READY=1 and WATCHDOG=1 itself (the unit needs NotifyAccess=all)' -r -f -a "redlock\t'redlock speaks for the service'
command\t'The command speaks for itself, and runs only while the lock is held'"
complete -c redlock -n "__fish_redlock_using_subcommand run" -s s -l server -d 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand run" -l config -d 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand run" -l password-file -d 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand run" -l tls-ca-cert -d 'Trust this CA (PEM) for rediss:// masters instead of the system\'s trust store' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand run" -l tls-cert -d 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand run" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand run" -l log-format -d 'How to write diagnostics on stderr: text (the default), or one JSON object per line' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand run" -l no-wait -d 'Try once and give up at once if the lock is taken (the default; same as --wait 0)'
complete -c redlock -n "__fish_redlock_using_subcommand run" -l fence -d 'Also obtain a fencing token: a number greater than any handed out before for this key, given to the command as REDLOCK_FENCE (acquire prints it with --format env or json). Have the protected resource refuse numbers lower than the highest it has seen'
complete -c redlock -n "__fish_redlock_using_subcommand run" -l supersede -d 'Waiting, let the newest waiter evict the older waiters of the key (never the holder): an evicted run does not run its command and exits 80, naming who superseded it. Newer means a higher --order, else a later arrival. Needs --wait; every waiter of a key must agree (a waiter without it is refused, exit 64, and the other way round). Only for a lock (not with --limit or --shared)'
complete -c redlock -n "__fish_redlock_using_subcommand run" -l shared -d 'Take the lock as a reader, shared with any other readers (as flock -s); without it the lock is exclusive, a writer (as flock -x). Readers and writers of a key wait in one line: a reader that comes behind a waiting writer waits for it'
complete -c redlock -n "__fish_redlock_using_subcommand run" -s v -l verbose -d 'Say more on stderr: -v what redlock does, -vv what each master answered'
complete -c redlock -n "__fish_redlock_using_subcommand run" -s q -l quiet -d 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it'
complete -c redlock -n "__fish_redlock_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand run" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s k -l key -d 'The lock\'s name (the Redis key). Everyone who must not overlap uses the same key' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s t -l ttl -d 'How long the lock lives on each master without renewal, e.g. 30s, 2m, 500ms. If redlock dies, others wait at most this long. Default: 30s (or `ttl` in the config file)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s w -l wait -d 'If the lock is taken, wait in line for it (first come, first served) for up to this long before giving up, or `forever`. Default: try once' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l node-timeout -d 'How long one master gets to answer one request, connecting included. Default: TTL/20, between 10ms and 1s' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l drift-factor -d 'Share of the TTL set aside for clock drift between hosts (Redlock\'s drift factor). Default: 0.01' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l conflict-exit-code -d 'Exit with this code instead of 75 when the lock is held elsewhere (0 suits cron jobs that should just skip their turn)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l order -d 'This run\'s order: a number that grows with each run, such as the CI pipeline\'s number. A run whose order is lower than the highest that already took the lock is outdated: it neither waits nor runs, and exits 81. The same order may run again (a retry). Only for a lock (not with --limit or --shared)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l outdated-exit-code -d 'Exit with this code instead of 81 when a higher --order already took the lock (0 counts a skipped deploy as a success)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l superseded-exit-code -d 'Exit with this code instead of 80 when a newer waiter superseded this one (0 counts a skipped deploy as a success)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l limit -d 'Let up to L holders in at once (a counting semaphore) instead of one; L is 1 to 1000. Each holder needs a slot on floor(L*N/(L+1))+1 of the N masters (-v shows it), so fewer masters may be down than for a lock. Every holder of the key must use the same L' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l note -d 'Say why, or for which job, the lock is held: status, list, a conflict and a waiter show it beside the holder. At most 256 bytes. Default: in a CI job (GitHub Actions, GitLab CI, Jenkins, Buildkite), the job\'s URL; --note \'\' gives none' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l history -d 'Record this turn in the key\'s history (`redlock history`), which keeps the last N events of the key on each master, for 30 days after its last use; `off` records nothing. N is 1 to 10000; default 1000' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s f -l format -d 'How to print the lock' -r -f -a "plain\t'The token alone'
env\t'`export` lines for `eval`: REDLOCK_KEY, REDLOCK_TOKEN, REDLOCK_VALIDITY_MS, and REDLOCK_FENCE with --fence'
json\t'One JSON object: key, token, nested, ttl_ms, validity_ms, fence, limit (--limit), holder'"
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l renew-while -d 'Keep the lock renewed by a small detached process for as long as process PID lives (e.g. $$, the calling shell); it is released when PID exits' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l metrics-file -d 'Add what this command saw (seconds waited for the lock, seconds held, the outcome) to this Prometheus text file, for node_exporter\'s textfile collector; merged with what other redlock processes wrote there. Default: `metrics_file` in the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s s -l server -d 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l config -d 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l password-file -d 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l tls-ca-cert -d 'Trust this CA (PEM) for rediss:// masters instead of the system\'s trust store' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l tls-cert -d 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l log-format -d 'How to write diagnostics on stderr: text (the default), or one JSON object per line' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l no-wait -d 'Try once and give up at once if the lock is taken (the default; same as --wait 0)'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l fence -d 'Also obtain a fencing token: a number greater than any handed out before for this key, given to the command as REDLOCK_FENCE (acquire prints it with --format env or json). Have the protected resource refuse numbers lower than the highest it has seen'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l supersede -d 'Waiting, let the newest waiter evict the older waiters of the key (never the holder): an evicted run does not run its command and exits 80, naming who superseded it. Newer means a higher --order, else a later arrival. Needs --wait; every waiter of a key must agree (a waiter without it is refused, exit 64, and the other way round). Only for a lock (not with --limit or --shared)'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l shared -d 'Take the lock as a reader, shared with any other readers (as flock -s); without it the lock is exclusive, a writer (as flock -x). Readers and writers of a key wait in one line: a reader that comes behind a waiting writer waits for it'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s v -l verbose -d 'Say more on stderr: -v what redlock does, -vv what each master answered'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s q -l quiet -d 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s k -l key -d 'The lock\'s name' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand release" -l token -d 'The token `acquire` printed (required, but for `release --force`)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand release" -l node-timeout -d 'How long one master gets to answer. Default: 1s for release; for extend, as for acquire: TTL/20, between 10ms and 1s' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand release" -l reason -d 'Why (with --force): recorded with the revocation and shown to the revoked holder, to `status` and `list`. At most 256 bytes' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand release" -l metrics-file -d 'Add what this command saw (seconds waited for the lock, seconds held, the outcome) to this Prometheus text file, for node_exporter\'s textfile collector; merged with what other redlock processes wrote there. Default: `metrics_file` in the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -s s -l server -d 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand release" -l config -d 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l password-file -d 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l tls-ca-cert -d 'Trust this CA (PEM) for rediss:// masters instead of the system\'s trust store' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l tls-cert -d 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l log-format -d 'How to write diagnostics on stderr: text (the default), or one JSON object per line' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand release" -l force -d 'Revoke whoever holds the lock (the lock, every reader, every slot of a `--limit` semaphore), without their token. The key stays closed (each revoked slot stays taken) until the revoked holders have stopped and said so, or their TTL has run out: never two holders, never more than the limit. A revoked `run` stops its command (exit 70) and names who revoked it, from which host, and why'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s v -l verbose -d 'Say more on stderr: -v what redlock does, -vv what each master answered'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s k -l key -d 'The lock\'s name' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l token -d 'The token `acquire` printed (required, but for `release --force`)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l node-timeout -d 'How long one master gets to answer. Default: 1s for release; for extend, as for acquire: TTL/20, between 10ms and 1s' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s t -l ttl -d 'The new time to live, counted from now. Default: 30s (or `ttl` in the config file)' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s s -l server -d 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l config -d 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l password-file -d 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l tls-ca-cert -d 'Trust this CA (PEM) for rediss:// masters instead of the system\'s trust store' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l tls-cert -d 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l log-format -d 'How to write diagnostics on stderr: text (the default), or one JSON object per line' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s v -l verbose -d 'Say more on stderr: -v what redlock does, -vv what each master answered'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s k -l key -d 'The lock\'s name' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand status" -l node-timeout -d 'How long one master gets to answer. Default: 1s' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand status" -s s -l server -d 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand status" -l config -d 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l password-file -d 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l tls-ca-cert -d 'Trust this CA (PEM) for rediss:// masters instead of the system\'s trust store' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l tls-cert -d 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l log-format -d 'How to write diagnostics on stderr: text (the default), or one JSON object per line' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand status" -l json -d 'Print one JSON object instead of text (with --watch: one a line)'
complete -c redlock -n "__fish_redlock_using_subcommand status" -l watch -d 'Keep watching: print the holder now, then a line each time it changes (taken, released, expired, lost), a master goes down or comes back, or the state cannot be told; until SIGINT or SIGTERM (exit 0). Driven by the masters\' release notices, with a read at least every second'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s v -l verbose -d 'Say more on stderr: -v what redlock does, -vv what each master answered'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s q -l quiet -d 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s k -l key -d 'The lock\'s name' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand history" -l limit -d 'Show at most this many turns, 1 to 1000. Default: 20' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand history" -l since -d 'Show only the turns that started (or ended) within this long before now, e.g. 1h, 7d' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand history" -l node-timeout -d 'How long one master gets to answer each page of the read. Default: 1s' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand history" -s s -l server -d 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand history" -l config -d 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l password-file -d 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l tls-ca-cert -d 'Trust this CA (PEM) for rediss:// masters instead of the system\'s trust store' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l tls-cert -d 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l log-format -d 'How to write diagnostics on stderr: text (the default), or one JSON object per line' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand history" -l json -d 'Print one JSON object a line, one a turn, instead of text (docs/protocol.md, "History")'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s v -l verbose -d 'Say more on stderr: -v what redlock does, -vv what each master answered'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand list" -s p -l pattern -d 'Only locks whose key matches this glob (Redis\'s rules: *, ?, [a-z], \\ escapes), e.g. \'deploy-*\'' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand list" -l idle -d 'With --problems: report a fencing counter whose lock is absent and that nothing has used for this long. Default: 90d' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand list" -l timeout -d 'Stop scanning after this long; masters not scanned fully by then are named. Default: 10s' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand list" -l node-timeout -d 'How long one master gets to answer one request. Default: 1s' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand list" -s s -l server -d 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand list" -l config -d 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand list" -l password-file -d 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand list" -l tls-ca-cert -d 'Trust this CA (PEM) for rediss:// masters instead of the system\'s trust store' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand list" -l tls-cert -d 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand list" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand list" -l log-format -d 'How to write diagnostics on stderr: text (the default), or one JSON object per line' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand list" -l json -d 'Print one JSON object instead of text'
complete -c redlock -n "__fish_redlock_using_subcommand list" -l problems -d 'Also look for leaks: keys without a TTL, holder records whose lock is gone or holds another token, queued waiters whose lease lapsed, fencing counters unused for --idle. Each finding says what to do; exits 1 when anything is found'
complete -c redlock -n "__fish_redlock_using_subcommand list" -s v -l verbose -d 'Say more on stderr: -v what redlock does, -vv what each master answered'
complete -c redlock -n "__fish_redlock_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand list" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l node-timeout -d 'How long one master gets to answer each check. Default: 1s' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s s -l server -d 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l config -d 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l password-file -d 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l tls-ca-cert -d 'Trust this CA (PEM) for rediss:// masters instead of the system\'s trust store' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l tls-cert -d 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l log-format -d 'How to write diagnostics on stderr: text (the default), or one JSON object per line' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l json -d 'Print one JSON object instead of text'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s v -l verbose -d 'Say more on stderr: -v what redlock does, -vv what each master answered'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand config" -s s -l server -d 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379' -r -f
complete -c redlock -n "__fish_redlock_using_subcommand config" -l config -d 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand config" -l password-file -d 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand config" -l tls-ca-cert -d 'Trust this CA (PEM) for rediss:// masters instead of the system\'s trust store' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand config" -l tls-cert -d 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand config" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand config" -l log-format -d 'How to write diagnostics on stderr: text (the default), or one JSON object per line' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand config" -l json -d 'Print one JSON object instead of text'
complete -c redlock -n "__fish_redlock_using_subcommand config" -s v -l verbose -d 'Say more on stderr: -v what redlock does, -vv what each master answered'
complete -c redlock -n "__fish_redlock_using_subcommand config" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand config" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand completions" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand completions" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand man" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand man" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand help" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand help" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand completions" -f -a "bash elvish fish powershell zsh"
complete -c redlock -n "__fish_redlock_using_subcommand man" -f -a "run acquire release extend status history list doctor config completions man help"
complete -c redlock -n "__fish_redlock_using_subcommand help" -f -a "run acquire release extend status history list doctor config completions man help"

# After `redlock run ... --` comes a command line of its own: complete the command, then its
# arguments, as fish does for any command.
function __fish_redlock_after_double_dash
    contains -- -- (commandline -opc)
end

function __fish_redlock_command_line
    set -l words (commandline -opc)
    set -l dash (contains -i -- -- $words)
    set -e words[1..$dash]
    complete -C (string join -- ' ' (string escape -- $words) (commandline -ct))
end

complete -c redlock -f -a "(__fish_redlock_command_line)" \
    -n "__fish_redlock_using_subcommand run; and __fish_redlock_after_double_dash"
