
use builtin;
use str;

set edit:completion:arg-completer[redlock] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'redlock'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'redlock'= {
            cand -s 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --server 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --config 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)'
            cand --password-file 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file'
            cand --tls-ca-cert 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store'
            cand --tls-cert 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key'
            cand --tls-key 'The private key (PEM) of --tls-cert'
            cand --log-format 'How to write diagnostics on stderr: text, or one JSON object per line'
            cand -v 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand --verbose 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand -q 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand --quiet 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand run 'Take the lock, run a command while renewing it, release it, and exit with the command''s status'
            cand acquire 'Take the lock and print its token, for scripts that release it in a later step'
            cand release 'Release a lock taken with `acquire`, on every master'
            cand extend 'Extend a lock taken with `acquire` to a full TTL again, on a majority of masters'
            cand status 'Show who holds a lock, master by master, and the verdict'
            cand doctor 'Check the masters: reachable, a master and not a replica, version, eviction policy, persistence, clock skew, odd N, the same server listed twice'
            cand config 'Show the settings redlock would use, and where each comes from (passwords redacted)'
            cand completions 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
            cand man 'Print the man page (roff), or the page of one subcommand'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'redlock;run'= {
            cand -k 'The lock''s name (the Redis key). Everyone who must not overlap uses the same key'
            cand --key 'The lock''s name (the Redis key). Everyone who must not overlap uses the same key'
            cand -t 'How long the lock lives on each master without renewal, e.g. 30s, 2m, 500ms. If redlock dies, others wait at most this long. Default: 30s (or `ttl` in the config file)'
            cand --ttl 'How long the lock lives on each master without renewal, e.g. 30s, 2m, 500ms. If redlock dies, others wait at most this long. Default: 30s (or `ttl` in the config file)'
            cand -w 'If the lock is taken, retry (with jitter) for up to this long before giving up, or `forever`. Default: try once'
            cand --wait 'If the lock is taken, retry (with jitter) for up to this long before giving up, or `forever`. Default: try once'
            cand --node-timeout 'How long one master gets to answer one request, connecting included. Default: TTL/20, between 10ms and 1s'
            cand --drift-factor 'Share of the TTL set aside for clock drift between hosts (Redlock''s drift factor). Default: 0.01'
            cand --conflict-exit-code 'Exit with this code instead of 75 when the lock is held elsewhere (0 suits cron jobs that should just skip their turn)'
            cand --kill-after 'On lock loss, time between SIGTERM and SIGKILL to the command. Default: 5s, or TTL/4 if shorter; at most TTL/2, so the command is always dead before the validity ends'
            cand --hold-min 'Keep the lock at least this long after the start, even if the command ends sooner: the key is left to expire then instead of being deleted (cron on several hosts: the same job fired a moment later elsewhere does not run again)'
            cand --max-duration 'Stop the command (SIGTERM, then SIGKILL after --kill-after) and release the lock once it has run this long; redlock then exits 124. Caps how long renewal may hold the lock'
            cand -s 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --server 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --config 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)'
            cand --password-file 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file'
            cand --tls-ca-cert 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store'
            cand --tls-cert 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key'
            cand --tls-key 'The private key (PEM) of --tls-cert'
            cand --log-format 'How to write diagnostics on stderr: text, or one JSON object per line'
            cand --no-wait 'Try once and give up at once if the lock is taken (the default; same as --wait 0)'
            cand --fence 'Also obtain a fencing token: a number greater than any handed out before for this key, given to the command as REDLOCK_FENCE (acquire prints it with --format env or json). Have the protected resource refuse numbers lower than the highest it has seen'
            cand -v 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand --verbose 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand -q 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand --quiet 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'redlock;acquire'= {
            cand -k 'The lock''s name (the Redis key). Everyone who must not overlap uses the same key'
            cand --key 'The lock''s name (the Redis key). Everyone who must not overlap uses the same key'
            cand -t 'How long the lock lives on each master without renewal, e.g. 30s, 2m, 500ms. If redlock dies, others wait at most this long. Default: 30s (or `ttl` in the config file)'
            cand --ttl 'How long the lock lives on each master without renewal, e.g. 30s, 2m, 500ms. If redlock dies, others wait at most this long. Default: 30s (or `ttl` in the config file)'
            cand -w 'If the lock is taken, retry (with jitter) for up to this long before giving up, or `forever`. Default: try once'
            cand --wait 'If the lock is taken, retry (with jitter) for up to this long before giving up, or `forever`. Default: try once'
            cand --node-timeout 'How long one master gets to answer one request, connecting included. Default: TTL/20, between 10ms and 1s'
            cand --drift-factor 'Share of the TTL set aside for clock drift between hosts (Redlock''s drift factor). Default: 0.01'
            cand --conflict-exit-code 'Exit with this code instead of 75 when the lock is held elsewhere (0 suits cron jobs that should just skip their turn)'
            cand -f 'How to print the lock'
            cand --format 'How to print the lock'
            cand --renew-while 'Keep the lock renewed by a small detached process for as long as process PID lives (e.g. $$, the calling shell); it is released when PID exits'
            cand -s 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --server 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --config 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)'
            cand --password-file 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file'
            cand --tls-ca-cert 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store'
            cand --tls-cert 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key'
            cand --tls-key 'The private key (PEM) of --tls-cert'
            cand --log-format 'How to write diagnostics on stderr: text, or one JSON object per line'
            cand --no-wait 'Try once and give up at once if the lock is taken (the default; same as --wait 0)'
            cand --fence 'Also obtain a fencing token: a number greater than any handed out before for this key, given to the command as REDLOCK_FENCE (acquire prints it with --format env or json). Have the protected resource refuse numbers lower than the highest it has seen'
            cand -v 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand --verbose 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand -q 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand --quiet 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'redlock;release'= {
            cand -k 'The lock''s name'
            cand --key 'The lock''s name'
            cand --token 'The token `acquire` printed'
            cand --node-timeout 'How long one master gets to answer. Default: 1s for release; for extend, as for acquire: TTL/20, between 10ms and 1s'
            cand -s 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --server 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --config 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)'
            cand --password-file 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file'
            cand --tls-ca-cert 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store'
            cand --tls-cert 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key'
            cand --tls-key 'The private key (PEM) of --tls-cert'
            cand --log-format 'How to write diagnostics on stderr: text, or one JSON object per line'
            cand -v 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand --verbose 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand -q 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand --quiet 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'redlock;extend'= {
            cand -k 'The lock''s name'
            cand --key 'The lock''s name'
            cand --token 'The token `acquire` printed'
            cand --node-timeout 'How long one master gets to answer. Default: 1s for release; for extend, as for acquire: TTL/20, between 10ms and 1s'
            cand -t 'The new time to live, counted from now. Default: 30s (or `ttl` in the config file)'
            cand --ttl 'The new time to live, counted from now. Default: 30s (or `ttl` in the config file)'
            cand -s 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --server 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --config 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)'
            cand --password-file 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file'
            cand --tls-ca-cert 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store'
            cand --tls-cert 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key'
            cand --tls-key 'The private key (PEM) of --tls-cert'
            cand --log-format 'How to write diagnostics on stderr: text, or one JSON object per line'
            cand -v 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand --verbose 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand -q 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand --quiet 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'redlock;status'= {
            cand -k 'The lock''s name'
            cand --key 'The lock''s name'
            cand --node-timeout 'How long one master gets to answer. Default: 1s'
            cand -s 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --server 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --config 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)'
            cand --password-file 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file'
            cand --tls-ca-cert 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store'
            cand --tls-cert 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key'
            cand --tls-key 'The private key (PEM) of --tls-cert'
            cand --log-format 'How to write diagnostics on stderr: text, or one JSON object per line'
            cand --json 'Print one JSON object instead of text'
            cand -v 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand --verbose 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand -q 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand --quiet 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'redlock;doctor'= {
            cand --node-timeout 'How long one master gets to answer each check. Default: 1s'
            cand -s 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --server 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --config 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)'
            cand --password-file 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file'
            cand --tls-ca-cert 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store'
            cand --tls-cert 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key'
            cand --tls-key 'The private key (PEM) of --tls-cert'
            cand --log-format 'How to write diagnostics on stderr: text, or one JSON object per line'
            cand --json 'Print one JSON object instead of text'
            cand -v 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand --verbose 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand -q 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand --quiet 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'redlock;config'= {
            cand -s 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --server 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --config 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)'
            cand --password-file 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file'
            cand --tls-ca-cert 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store'
            cand --tls-cert 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key'
            cand --tls-key 'The private key (PEM) of --tls-cert'
            cand --log-format 'How to write diagnostics on stderr: text, or one JSON object per line'
            cand --json 'Print one JSON object instead of text'
            cand -v 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand --verbose 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand -q 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand --quiet 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'redlock;completions'= {
            cand -s 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --server 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --config 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)'
            cand --password-file 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file'
            cand --tls-ca-cert 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store'
            cand --tls-cert 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key'
            cand --tls-key 'The private key (PEM) of --tls-cert'
            cand --log-format 'How to write diagnostics on stderr: text, or one JSON object per line'
            cand -v 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand --verbose 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand -q 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand --quiet 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'redlock;man'= {
            cand -s 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --server 'A Redis master, as redis://[user:pass@]host:port[/db], rediss://... (TLS) or redis+unix:///path. Repeat for each master (3 or 5 is usual). Default: $REDLOCK_SERVERS (comma- or space-separated), else redis://127.0.0.1:6379'
            cand --config 'Read settings from this TOML file (default: $REDLOCK_CONFIG, else ~/.config/redlock/config.toml, else /etc/redlock/config.toml, if present)'
            cand --password-file 'Read the Redis password from the first line of this file (for masters whose URL has none). Default: $REDLOCK_PASSWORD_FILE, $REDLOCK_PASSWORD, or the config file'
            cand --tls-ca-cert 'Trust this CA (PEM) for rediss:// masters instead of the system''s trust store'
            cand --tls-cert 'Present this client certificate (PEM) to rediss:// masters; needs --tls-key'
            cand --tls-key 'The private key (PEM) of --tls-cert'
            cand --log-format 'How to write diagnostics on stderr: text, or one JSON object per line'
            cand -v 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand --verbose 'Say more on stderr: -v what redlock does, -vv what each master answered'
            cand -q 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand --quiet 'Print nothing on stderr when the lock is held elsewhere (the exit code still says so)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'redlock;help'= {
            cand run 'Take the lock, run a command while renewing it, release it, and exit with the command''s status'
            cand acquire 'Take the lock and print its token, for scripts that release it in a later step'
            cand release 'Release a lock taken with `acquire`, on every master'
            cand extend 'Extend a lock taken with `acquire` to a full TTL again, on a majority of masters'
            cand status 'Show who holds a lock, master by master, and the verdict'
            cand doctor 'Check the masters: reachable, a master and not a replica, version, eviction policy, persistence, clock skew, odd N, the same server listed twice'
            cand config 'Show the settings redlock would use, and where each comes from (passwords redacted)'
            cand completions 'Print a shell completion script (bash, zsh, fish, elvish, powershell)'
            cand man 'Print the man page (roff), or the page of one subcommand'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'redlock;help;run'= {
        }
        &'redlock;help;acquire'= {
        }
        &'redlock;help;release'= {
        }
        &'redlock;help;extend'= {
        }
        &'redlock;help;status'= {
        }
        &'redlock;help;doctor'= {
        }
        &'redlock;help;config'= {
        }
        &'redlock;help;completions'= {
        }
        &'redlock;help;man'= {
        }
        &'redlock;help;help'= {
        }
    ]
    $completions[$command]
}
