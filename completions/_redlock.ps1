
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'redlock' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'redlock'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'redlock' {
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file')
            [CompletionResult]::new('--tls-ca-cert', '--tls-ca-cert', [CompletionResultType]::ParameterName, 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How to write diagnostics on stderr: text (the default), or one JSON object per line')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('run', 'run', [CompletionResultType]::ParameterValue, 'Take the lock, run a command while renewing it, release it, and exit with the command''s status')
            [CompletionResult]::new('acquire', 'acquire', [CompletionResultType]::ParameterValue, 'Take the lock and print its token, for scripts that release it in a later step')
            [CompletionResult]::new('release', 'release', [CompletionResultType]::ParameterValue, 'Release a lock taken with `acquire`, on every master; or, with --force, revoke whoever holds it')
            [CompletionResult]::new('extend', 'extend', [CompletionResultType]::ParameterValue, 'Extend a lock taken with `acquire` to a full TTL again, on a majority of masters')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show who holds a lock, master by master, and the verdict; with --watch, a line each time its holder changes')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'Show a lock''s last turns, newest first: who held it, when, for how long, and how each turn ended (released with the command''s status, lost, revoked, expired; or never ran: superseded, gave up)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List every lock held on the masters, with its holder and queued waiters, and every semaphore (--limit) with its slots; with --problems, also look for leaks')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check the masters: reachable, which server (Redis, Valkey, KeyDB, Dragonfly, Garnet, Kvrocks) and whether it can hold a lock by itself, a master and not a replica, version, eviction policy, persistence, clock skew, odd N, the same server listed twice')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Show the settings redlock would use, and where each comes from (passwords redacted)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, elvish, powershell)')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page (roff), or the page of one subcommand')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print the help of redlock, or of one of its subcommands (the same as --help)')
            break
        }
        'redlock;run' {
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'The lock''s name (the Redis key). Everyone who must not overlap uses the same key')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The lock''s name (the Redis key). Everyone who must not overlap uses the same key')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'How long the lock lives on each master without renewal, e.g. 30s, 2m, 500ms. If redlock dies, others wait at most this long. Default: 30s (or `ttl` in the config file)')
            [CompletionResult]::new('--ttl', '--ttl', [CompletionResultType]::ParameterName, 'How long the lock lives on each master without renewal, e.g. 30s, 2m, 500ms. If redlock dies, others wait at most this long. Default: 30s (or `ttl` in the config file)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'If the lock is taken, wait in line for it (first come, first served) for up to this long before giving up, or `forever`. Default: try once')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'If the lock is taken, wait in line for it (first come, first served) for up to this long before giving up, or `forever`. Default: try once')
            [CompletionResult]::new('--node-timeout', '--node-timeout', [CompletionResultType]::ParameterName, 'How long one master gets to answer one request, connecting included. Default: TTL/20, between 10ms and 1s')
            [CompletionResult]::new('--drift-factor', '--drift-factor', [CompletionResultType]::ParameterName, 'Share of the TTL set aside for clock drift between hosts (Redlock''s drift factor). Default: 0.01')
            [CompletionResult]::new('--conflict-exit-code', '--conflict-exit-code', [CompletionResultType]::ParameterName, 'Exit with this code instead of 75 when the lock is held elsewhere (0 suits cron jobs that should just skip their turn)')
            [CompletionResult]::new('--order', '--order', [CompletionResultType]::ParameterName, 'This run''s order: a number that grows with each run, such as the CI pipeline''s number. A run whose order is lower than the highest that already took the lock is outdated: it neither waits nor runs, and exits 81. The same order may run again (a retry). Only for a lock (not with --limit or --shared)')
            [CompletionResult]::new('--outdated-exit-code', '--outdated-exit-code', [CompletionResultType]::ParameterName, 'Exit with this code instead of 81 when a higher --order already took the lock (0 counts a skipped deploy as a success)')
            [CompletionResult]::new('--superseded-exit-code', '--superseded-exit-code', [CompletionResultType]::ParameterName, 'Exit with this code instead of 80 when a newer waiter superseded this one (0 counts a skipped deploy as a success)')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Let up to L holders in at once (a counting semaphore) instead of one; L is 1 to 1000. Each holder needs a slot on floor(L*N/(L+1))+1 of the N masters (-v shows it), so fewer masters may be down than for a lock. Every holder of the key must use the same L')
            [CompletionResult]::new('--note', '--note', [CompletionResultType]::ParameterName, 'Say why, or for which job, the lock is held: status, list, a conflict and a waiter show it beside the holder. At most 256 bytes. Default: in a CI job (GitHub Actions, GitLab CI, Jenkins, Buildkite), the job''s URL; --note '''' gives none')
            [CompletionResult]::new('--history', '--history', [CompletionResultType]::ParameterName, 'Record this turn in the key''s history (`redlock history`), which keeps the last N events of the key on each master, for 30 days after its last use; `off` records nothing. N is 1 to 10000; default 1000')
            [CompletionResult]::new('--kill-after', '--kill-after', [CompletionResultType]::ParameterName, 'On lock loss, time between SIGTERM and SIGKILL to the command. Default: 5s, or TTL/4 if shorter; at most TTL/2, so the command is always dead before the validity ends')
            [CompletionResult]::new('--hold-min', '--hold-min', [CompletionResultType]::ParameterName, 'Keep the lock at least this long after the start, even if the command ends sooner: the key is left to expire then instead of being deleted (cron on several hosts: the same job fired a moment later elsewhere does not run again)')
            [CompletionResult]::new('--max-duration', '--max-duration', [CompletionResultType]::ParameterName, 'Stop the command (SIGTERM, then SIGKILL after --kill-after) and release the lock once it has run this long; redlock then exits 124. Caps how long renewal may hold the lock')
            [CompletionResult]::new('--metrics-file', '--metrics-file', [CompletionResultType]::ParameterName, 'Add what this command saw (seconds waited for the lock, seconds held, the outcome) to this Prometheus text file, for node_exporter''s textfile collector; merged with what other redlock processes wrote there. Default: `metrics_file` in the config file')
            [CompletionResult]::new('--sd-notify', '--sd-notify', [CompletionResultType]::ParameterName, 'Under systemd (NOTIFY_SOCKET set), who tells it that the service is ready. redlock: READY=1 once the lock is held and the command started, STATUS= lines, and WATCHDOG=1 while renewals keep a majority (with WatchdogSec=); the command does not see NOTIFY_SOCKET. command: the command gets NOTIFY_SOCKET and WATCHDOG_USEC and sends READY=1 and WATCHDOG=1 itself (the unit needs NotifyAccess=all)')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file')
            [CompletionResult]::new('--tls-ca-cert', '--tls-ca-cert', [CompletionResultType]::ParameterName, 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How to write diagnostics on stderr: text (the default), or one JSON object per line')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Try once and give up at once if the lock is taken (the default; same as --wait 0)')
            [CompletionResult]::new('--fence', '--fence', [CompletionResultType]::ParameterName, 'Also obtain a fencing token: a number greater than any handed out before for this key, given to the command as REDLOCK_FENCE (acquire prints it with --format env or json). Have the protected resource refuse numbers lower than the highest it has seen')
            [CompletionResult]::new('--supersede', '--supersede', [CompletionResultType]::ParameterName, 'Waiting, let the newest waiter evict the older waiters of the key (never the holder): an evicted run does not run its command and exits 80, naming who superseded it. Newer means a higher --order, else a later arrival. Needs --wait; every waiter of a key must agree (a waiter without it is refused, exit 64, and the other way round). Only for a lock (not with --limit or --shared)')
            [CompletionResult]::new('--shared', '--shared', [CompletionResultType]::ParameterName, 'Take the lock as a reader, shared with any other readers (as flock -s); without it the lock is exclusive, a writer (as flock -x). Readers and writers of a key wait in one line: a reader that comes behind a waiting writer waits for it')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'redlock;acquire' {
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'The lock''s name (the Redis key). Everyone who must not overlap uses the same key')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The lock''s name (the Redis key). Everyone who must not overlap uses the same key')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'How long the lock lives on each master without renewal, e.g. 30s, 2m, 500ms. If redlock dies, others wait at most this long. Default: 30s (or `ttl` in the config file)')
            [CompletionResult]::new('--ttl', '--ttl', [CompletionResultType]::ParameterName, 'How long the lock lives on each master without renewal, e.g. 30s, 2m, 500ms. If redlock dies, others wait at most this long. Default: 30s (or `ttl` in the config file)')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'If the lock is taken, wait in line for it (first come, first served) for up to this long before giving up, or `forever`. Default: try once')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'If the lock is taken, wait in line for it (first come, first served) for up to this long before giving up, or `forever`. Default: try once')
            [CompletionResult]::new('--node-timeout', '--node-timeout', [CompletionResultType]::ParameterName, 'How long one master gets to answer one request, connecting included. Default: TTL/20, between 10ms and 1s')
            [CompletionResult]::new('--drift-factor', '--drift-factor', [CompletionResultType]::ParameterName, 'Share of the TTL set aside for clock drift between hosts (Redlock''s drift factor). Default: 0.01')
            [CompletionResult]::new('--conflict-exit-code', '--conflict-exit-code', [CompletionResultType]::ParameterName, 'Exit with this code instead of 75 when the lock is held elsewhere (0 suits cron jobs that should just skip their turn)')
            [CompletionResult]::new('--order', '--order', [CompletionResultType]::ParameterName, 'This run''s order: a number that grows with each run, such as the CI pipeline''s number. A run whose order is lower than the highest that already took the lock is outdated: it neither waits nor runs, and exits 81. The same order may run again (a retry). Only for a lock (not with --limit or --shared)')
            [CompletionResult]::new('--outdated-exit-code', '--outdated-exit-code', [CompletionResultType]::ParameterName, 'Exit with this code instead of 81 when a higher --order already took the lock (0 counts a skipped deploy as a success)')
            [CompletionResult]::new('--superseded-exit-code', '--superseded-exit-code', [CompletionResultType]::ParameterName, 'Exit with this code instead of 80 when a newer waiter superseded this one (0 counts a skipped deploy as a success)')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Let up to L holders in at once (a counting semaphore) instead of one; L is 1 to 1000. Each holder needs a slot on floor(L*N/(L+1))+1 of the N masters (-v shows it), so fewer masters may be down than for a lock. Every holder of the key must use the same L')
            [CompletionResult]::new('--note', '--note', [CompletionResultType]::ParameterName, 'Say why, or for which job, the lock is held: status, list, a conflict and a waiter show it beside the holder. At most 256 bytes. Default: in a CI job (GitHub Actions, GitLab CI, Jenkins, Buildkite), the job''s URL; --note '''' gives none')
            [CompletionResult]::new('--history', '--history', [CompletionResultType]::ParameterName, 'Record this turn in the key''s history (`redlock history`), which keeps the last N events of the key on each master, for 30 days after its last use; `off` records nothing. N is 1 to 10000; default 1000')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'How to print the lock')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How to print the lock')
            [CompletionResult]::new('--renew-while', '--renew-while', [CompletionResultType]::ParameterName, 'Keep the lock renewed by a small detached process for as long as process PID lives (e.g. $$, the calling shell); it is released when PID exits')
            [CompletionResult]::new('--metrics-file', '--metrics-file', [CompletionResultType]::ParameterName, 'Add what this command saw (seconds waited for the lock, seconds held, the outcome) to this Prometheus text file, for node_exporter''s textfile collector; merged with what other redlock processes wrote there. Default: `metrics_file` in the config file')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file')
            [CompletionResult]::new('--tls-ca-cert', '--tls-ca-cert', [CompletionResultType]::ParameterName, 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How to write diagnostics on stderr: text (the default), or one JSON object per line')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Try once and give up at once if the lock is taken (the default; same as --wait 0)')
            [CompletionResult]::new('--fence', '--fence', [CompletionResultType]::ParameterName, 'Also obtain a fencing token: a number greater than any handed out before for this key, given to the command as REDLOCK_FENCE (acquire prints it with --format env or json). Have the protected resource refuse numbers lower than the highest it has seen')
            [CompletionResult]::new('--supersede', '--supersede', [CompletionResultType]::ParameterName, 'Waiting, let the newest waiter evict the older waiters of the key (never the holder): an evicted run does not run its command and exits 80, naming who superseded it. Newer means a higher --order, else a later arrival. Needs --wait; every waiter of a key must agree (a waiter without it is refused, exit 64, and the other way round). Only for a lock (not with --limit or --shared)')
            [CompletionResult]::new('--shared', '--shared', [CompletionResultType]::ParameterName, 'Take the lock as a reader, shared with any other readers (as flock -s); without it the lock is exclusive, a writer (as flock -x). Readers and writers of a key wait in one line: a reader that comes behind a waiting writer waits for it')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'redlock;release' {
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'The lock''s name')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The lock''s name')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'The token `acquire` printed (required, but for `release --force`)')
            [CompletionResult]::new('--node-timeout', '--node-timeout', [CompletionResultType]::ParameterName, 'How long one master gets to answer. Default: 1s for release; for extend, as for acquire: TTL/20, between 10ms and 1s')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why (with --force): recorded with the revocation and shown to the revoked holder, to `status` and `list`. At most 256 bytes')
            [CompletionResult]::new('--metrics-file', '--metrics-file', [CompletionResultType]::ParameterName, 'Add what this command saw (seconds waited for the lock, seconds held, the outcome) to this Prometheus text file, for node_exporter''s textfile collector; merged with what other redlock processes wrote there. Default: `metrics_file` in the config file')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file')
            [CompletionResult]::new('--tls-ca-cert', '--tls-ca-cert', [CompletionResultType]::ParameterName, 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How to write diagnostics on stderr: text (the default), or one JSON object per line')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Revoke whoever holds the lock (the lock, every reader, every slot of a `--limit` semaphore), without their token. The key stays closed (each revoked slot stays taken) until the revoked holders have stopped and said so, or their TTL has run out: never two holders, never more than the limit. A revoked `run` stops its command (exit 70) and names who revoked it, from which host, and why')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'redlock;extend' {
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'The lock''s name')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The lock''s name')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'The token `acquire` printed (required, but for `release --force`)')
            [CompletionResult]::new('--node-timeout', '--node-timeout', [CompletionResultType]::ParameterName, 'How long one master gets to answer. Default: 1s for release; for extend, as for acquire: TTL/20, between 10ms and 1s')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'The new time to live, counted from now. Default: 30s (or `ttl` in the config file)')
            [CompletionResult]::new('--ttl', '--ttl', [CompletionResultType]::ParameterName, 'The new time to live, counted from now. Default: 30s (or `ttl` in the config file)')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file')
            [CompletionResult]::new('--tls-ca-cert', '--tls-ca-cert', [CompletionResultType]::ParameterName, 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How to write diagnostics on stderr: text (the default), or one JSON object per line')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'redlock;status' {
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'The lock''s name')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The lock''s name')
            [CompletionResult]::new('--node-timeout', '--node-timeout', [CompletionResultType]::ParameterName, 'How long one master gets to answer. Default: 1s')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file')
            [CompletionResult]::new('--tls-ca-cert', '--tls-ca-cert', [CompletionResultType]::ParameterName, 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How to write diagnostics on stderr: text (the default), or one JSON object per line')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object instead of text (with --watch: one a line)')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Keep watching: print the holder now, then a line each time it changes (taken, released, expired, lost), a master goes down or comes back, or the state cannot be told; until SIGINT or SIGTERM (exit 0). Driven by the masters'' release notices, with a read at least every second')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Quiet: `run` and `acquire` say nothing when the lock is held elsewhere; `status` prints no report. The exit code still says it')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'redlock;history' {
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'The lock''s name')
            [CompletionResult]::new('--key', '--key', [CompletionResultType]::ParameterName, 'The lock''s name')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show at most this many turns, 1 to 1000. Default: 20')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Show only the turns that started (or ended) within this long before now, e.g. 1h, 7d')
            [CompletionResult]::new('--node-timeout', '--node-timeout', [CompletionResultType]::ParameterName, 'How long one master gets to answer each page of the read. Default: 1s')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file')
            [CompletionResult]::new('--tls-ca-cert', '--tls-ca-cert', [CompletionResultType]::ParameterName, 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How to write diagnostics on stderr: text (the default), or one JSON object per line')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object a line, one a turn, instead of text (docs/protocol.md, "History")')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'redlock;list' {
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Only locks whose key matches this glob (Redis''s rules: *, ?, [a-z], \ escapes), e.g. ''deploy-*''')
            [CompletionResult]::new('--pattern', '--pattern', [CompletionResultType]::ParameterName, 'Only locks whose key matches this glob (Redis''s rules: *, ?, [a-z], \ escapes), e.g. ''deploy-*''')
            [CompletionResult]::new('--idle', '--idle', [CompletionResultType]::ParameterName, 'With --problems: report a fencing counter whose lock is absent and that nothing has used for this long. Default: 90d')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop scanning after this long; masters not scanned fully by then are named. Default: 10s')
            [CompletionResult]::new('--node-timeout', '--node-timeout', [CompletionResultType]::ParameterName, 'How long one master gets to answer one request. Default: 1s')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file')
            [CompletionResult]::new('--tls-ca-cert', '--tls-ca-cert', [CompletionResultType]::ParameterName, 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How to write diagnostics on stderr: text (the default), or one JSON object per line')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object instead of text')
            [CompletionResult]::new('--problems', '--problems', [CompletionResultType]::ParameterName, 'Also look for leaks: keys without a TTL, holder records whose lock is gone or holds another token, queued waiters whose lease lapsed, fencing counters unused for --idle. Each finding says what to do; exits 1 when anything is found')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'redlock;doctor' {
            [CompletionResult]::new('--node-timeout', '--node-timeout', [CompletionResultType]::ParameterName, 'How long one master gets to answer each check. Default: 1s')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file')
            [CompletionResult]::new('--tls-ca-cert', '--tls-ca-cert', [CompletionResultType]::ParameterName, 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How to write diagnostics on stderr: text (the default), or one JSON object per line')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object instead of text')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'redlock;config' {
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'A Redis master, as redis://[user:pass@]host:port[/db] (or ?db=N), rediss://... (TLS), valkey:// and valkeys:// alike, redis+unix:///path, or redis+cluster://host:port (rediss+cluster://) for a whole Redis Cluster. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file')
            [CompletionResult]::new('--tls-ca-cert', '--tls-ca-cert', [CompletionResultType]::ParameterName, 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The private key (PEM) of --tls-cert')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How to write diagnostics on stderr: text (the default), or one JSON object per line')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object instead of text')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr: -v what redlock does, -vv what each master answered')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'redlock;completions' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'redlock;man' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'redlock;help' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
