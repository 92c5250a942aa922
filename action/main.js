// The action's main step (action.yml: `runs.main`): installs redlock when asked, then does
// the step's mode:
//   lock     take the lock and keep it for the rest of the job: `acquire --renew-while` the
//            runner's worker process (this step's parent, which lives until the job's last
//            post step), so that a small detached renewer keeps it renewed between the steps;
//            the token is kept in the step's state for post.js, which releases however the
//            job ends. A job killed outright takes the renewer with it (the runner kills
//            every process of the job at its end), and the lock expires within its TTL.
//   run      one command under `redlock run`, released when it ends (nothing for post.js).
//   check    who holds the lock (`status`), without taking it.
//   install  only put redlock on PATH, for `run: exec redlock ...` steps of your own.
// Outputs: acquired (true/false), token, holder (the holder record as JSON: this job's after
// `lock` took it, the one in the way when it could not, the current one for `check`; empty
// when there is none) and exit-code (redlock's; the step fails with it unless it is 0, or for
// `check`, 1: the lock is free).
'use strict';

const fs = require('fs');
const path = require('path');
const runner = require('./runner');
const { redlock } = require('./redlock');
const { install } = require('./install');

const { input, setOutput, saveState, UsageError } = runner;

// The options of the lock inputs, shared by `lock` and `run`; a bad value is redlock's to
// refuse (exit 64, one line naming the option).
function lockOptions() {
  const args = ['--key', input('key'), '--ttl', input('ttl') || '1m'];
  const wait = input('wait');
  if (wait) args.push('--wait', wait);
  const order = input('order');
  if (order) args.push('--order', order);
  if (runner.booleanInput('supersede')) args.push('--supersede');
  // Without a note, redlock notes the run's URL itself (GITHUB_SERVER_URL, ...).
  const note = input('note');
  if (note) args.push('--note', note);
  return args;
}

// The holder in the way, as `status --json` gives it; empty if it cannot tell.
async function currentHolder(program) {
  const status = await redlock(program, ['status', '--json', '--key', input('key')]);
  try {
    const holder = JSON.parse(status.stdout).holder;
    return holder ? JSON.stringify(holder) : '';
  } catch {
    return '';
  }
}

async function lock(program) {
  // The runner's worker runs every step of the job, post steps included, as its children.
  const worker = process.ppid;
  if (worker <= 1) {
    throw new UsageError('this step has no runner process to follow (a container job?): use mode run');
  }
  const taken = await redlock(program, [
    'acquire', '--format', 'json', '--renew-while', String(worker), ...lockOptions(),
  ]);
  // From here to the state saved, all is synchronous: no signal falls in between.
  if (taken.status === 0) {
    const lock = JSON.parse(taken.stdout);
    saveState('token', lock.token);
    saveState('key', input('key'));
    saveState('redlock', program);
    setOutput('acquired', 'true');
    setOutput('token', lock.token);
    setOutput('holder', JSON.stringify(lock.holder));
  } else {
    setOutput('acquired', 'false');
    setOutput('token', '');
    setOutput('holder', await currentHolder(program));
  }
  setOutput('exit-code', taken.status);
  return taken.status;
}

async function runCommand(program) {
  const command = input('command');
  if (!command) throw new UsageError('mode run needs the command input: the command to run under the lock');
  // The command runs as a `run:` step's does (bash -e FILE), after a line that keeps the token
  // redlock gave it, so that the outputs can say whether the lock was taken.
  const temp = fs.mkdtempSync(path.join(process.env.RUNNER_TEMP || '/tmp', 'redlock-run-'));
  const script = path.join(temp, 'step.sh');
  const tokenFile = `${script}.token`;
  fs.writeFileSync(script, `printf '%s' "$REDLOCK_TOKEN" > "$0.token"\n${command}\n`);
  const ran = await redlock(program, ['run', ...lockOptions(), '--', 'bash', '-e', script]);
  const token = fs.existsSync(tokenFile) ? fs.readFileSync(tokenFile, 'utf8') : '';
  fs.rmSync(temp, { recursive: true, force: true });
  setOutput('acquired', token ? 'true' : 'false');
  setOutput('token', token);
  setOutput('holder', token ? '' : await currentHolder(program));
  setOutput('exit-code', ran.status);
  return ran.status;
}

async function check(program) {
  const status = await redlock(program, ['status', '--json', '--key', input('key')]);
  let holder = '';
  try {
    const parsed = JSON.parse(status.stdout).holder;
    if (parsed) holder = JSON.stringify(parsed);
  } catch {
    // No JSON: redlock said why on stderr, and the exit code says it too.
  }
  setOutput('acquired', 'false');
  setOutput('token', '');
  setOutput('holder', holder);
  setOutput('exit-code', status.status);
  // 1 is an answer (the lock is free), not a failure.
  return status.status === 1 ? 0 : status.status;
}

const MODES = { lock, run: runCommand, check };

async function main() {
  const mode = input('mode') || 'lock';
  if (mode !== 'install' && !MODES[mode]) {
    throw new UsageError(`mode ${JSON.stringify(mode)}: give lock, run, check or install`);
  }
  if (mode !== 'install' && !input('key')) throw new UsageError(`mode ${mode} needs the key input: the lock's name`);
  let program = 'redlock';
  const releaseUrl = input('release-url');
  if (releaseUrl) {
    const dir = await install({ releaseUrl, version: input('version'), sha256: input('sha256') });
    runner.addPath(dir);
    program = path.join(dir, 'redlock');
  } else if (mode === 'install') {
    throw new UsageError('mode install needs the release-url input: where the release archives are');
  }
  return mode === 'install' ? 0 : MODES[mode](program);
}

runner.runStep(main);
