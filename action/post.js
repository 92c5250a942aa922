// The action's post step (action.yml: `runs.post`, `post-if: always()`): after the job's last
// step, whether the job passed, failed or was cancelled, gives back the lock that `mode: lock`
// took, by the token main.js kept in the step's state. Nothing to do after another mode, or
// when the lock was not taken. The renewer that `acquire --renew-while` left finds the lock
// gone at its next renewal (within a third of the TTL) and exits; should the job end first,
// the runner's end-of-job clean-up kills it, which is harmless once the lock is given back.
'use strict';

const runner = require('./runner');
const { redlock } = require('./redlock');

async function post() {
  const token = runner.state('token');
  if (!token) return 0;
  const released = await redlock(runner.state('redlock') || 'redlock', [
    'release', '--key', runner.state('key'), '--token', token,
  ]);
  return released.status;
}

runner.runStep(post);
