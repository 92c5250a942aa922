// Runs the redlock CLI for the action: the master settings every command of a step shares
// (the servers and config inputs), and the runner's cancel passed on. On a cancel the runner
// signals the step's process alone (SIGINT, 7.5 s later SIGTERM, 2.5 s later SIGKILL: see
// docs/ci.md), which is this node process, never redlock: so each signal is forwarded to the
// redlock running, which leaves the line or stops its command and releases, and the step ends
// with redlock's status.
'use strict';

const { spawn } = require('child_process');
const os = require('os');
const { input, UsageError } = require('./runner');

// The signals a runner sends on a cancel, forwarded to the redlock that runs.
const FORWARDED = ['SIGINT', 'SIGTERM'];

// The arguments and environment that pick the masters: the `servers` input (a secret, so it
// travels in the environment, never on a command line) else the job's REDLOCK_SERVERS, and the
// `config` input.
function masterSettings() {
  const env = { ...process.env };
  const servers = input('servers');
  if (servers) env.REDLOCK_SERVERS = servers;
  const args = [];
  const config = input('config');
  if (config) args.push('--config', config);
  return { args, env };
}

// The child running now, to which a signal goes; none between children.
let current = null;

// A signal while a child runs goes to it, and the step ends with the child's status. With no
// child running (downloading, or between two commands) the step ends at once, as an action
// without handlers would: 128+N. The code that saves the token after `acquire` is synchronous,
// so no signal can fall between the lock taken and the token kept for the post step.
for (const signal of FORWARDED) {
  process.on(signal, () => {
    if (current) current.kill(signal);
    else process.exit(128 + os.constants.signals[signal]);
  });
}

// Runs `program args...` with the runner's signals forwarded; resolves to its status as a
// shell reports it (128+N for a death by signal N) and what it wrote to stdout. Its stderr
// goes to the step's log as it comes.
function run(program, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    current = child;
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.on('error', (error) => {
      current = null;
      if (error.code === 'ENOENT') {
        reject(
          new UsageError(
            `${program} is not on PATH: give the action release-url (and version) to install it, ` +
              'or install redlock in an earlier step',
          ),
        );
      } else {
        reject(new Error(`cannot start ${program}: ${error.message}`));
      }
    });
    child.on('close', (code, signal) => {
      current = null;
      resolve({ status: code !== null ? code : 128 + os.constants.signals[signal], stdout });
    });
  });
}

// `redlock args...` with the master settings, `program` being the redlock to run.
function redlock(program, args) {
  const settings = masterSettings();
  return run(program, [...args, ...settings.args], settings.env);
}

module.exports = { redlock, run, masterSettings };
