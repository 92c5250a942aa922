// The GitHub Actions runner's side of a JavaScript action, without @actions/core: inputs from
// INPUT_* variables, outputs, state and PATH additions through the files the runner names
// (GITHUB_OUTPUT, GITHUB_STATE, GITHUB_PATH), and errors as one `::error::` line on stderr,
// which the runner shows as an annotation. The action has no npm dependency (no node_modules
// to vet, vendor or update): these few file commands are all it needs of @actions/core.
'use strict';

const crypto = require('crypto');
const fs = require('fs');

// An input as the runner passes it: INPUT_ + the name upper-cased, spaces as underscores
// (hyphens stay), with the default of action.yml already filled in; trimmed, as core does.
function input(name) {
  const value = process.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] || '';
  return value.trim();
}

// A true/false input, as YAML 1.2's core schema spells them; anything else is bad input.
function booleanInput(name) {
  const value = input(name);
  if (['true', 'True', 'TRUE'].includes(value)) return true;
  if (['false', 'False', 'FALSE', ''].includes(value)) return false;
  throw new UsageError(`input ${name} is ${JSON.stringify(value)}: give true or false`);
}

// `name<<DELIMITER`, the value, `DELIMITER`: the form that carries any value, newlines
// included; the delimiter is random so that no value can end it early.
function appendCommand(variable, name, value) {
  const file = process.env[variable];
  if (!file) throw new Error(`${variable} is not set: this must run as a step of a GitHub Actions job`);
  const delimiter = `ghadelimiter_${crypto.randomUUID()}`;
  fs.appendFileSync(file, `${name}<<${delimiter}\n${value}\n${delimiter}\n`);
}

function setOutput(name, value) {
  appendCommand('GITHUB_OUTPUT', name, String(value));
}

// State for this action's post step, which the runner gives it as STATE_<name>.
function saveState(name, value) {
  appendCommand('GITHUB_STATE', name, String(value));
}

function state(name) {
  return process.env[`STATE_${name}`] || '';
}

// Puts `dir` in front of PATH for this process and, through GITHUB_PATH, for the later steps.
function addPath(dir) {
  const file = process.env.GITHUB_PATH;
  if (!file) throw new Error('GITHUB_PATH is not set: this must run as a step of a GitHub Actions job');
  fs.appendFileSync(file, `${dir}\n`);
  process.env.PATH = `${dir}:${process.env.PATH || ''}`;
}

// Bad input or an environment the action cannot work in: the step fails with this one line.
class UsageError extends Error {}

// The one line a failure prints, as an annotation (escaped as the runner expects: % and
// newlines would otherwise end or corrupt the command).
function error(message) {
  const escaped = String(message).replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  process.stderr.write(`::error::redlock action: ${escaped}\n`);
}

// Runs `main`; a thrown error becomes one line and exit 1 (64 for bad input, as redlock's
// own usage errors).
function runStep(main) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (thrown) => {
      error(thrown.message);
      process.exitCode = thrown instanceof UsageError ? 64 : 1;
    },
  );
}

module.exports = { input, booleanInput, setOutput, saveState, state, addPath, error, runStep, UsageError };
