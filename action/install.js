// The install step: puts the redlock of a release on PATH, as actions/setup-* do. The build
// is picked by RUNNER_OS and RUNNER_ARCH, downloaded from the release-url input (http, https
// or file), checked against the release's SHA256SUMS (or the sha256 input, a sum kept in the
// workflow, which proves the file is the one vetted, not only that it is whole), unpacked with
// the system's tar, and kept in the runner's tool cache (RUNNER_TOOL_CACHE/redlock/VERSION/ARCH,
// complete once ARCH.complete exists beside it, the layout of @actions/tool-cache), so that a
// self-hosted runner downloads each version once.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const https = require('https');
const path = require('path');
const { execFileSync } = require('child_process');
const { UsageError } = require('./runner');

// The runner's architectures with a build, by the CPU part of the archive's name
// (scripts/package: redlock-VERSION-CPU-unknown-linux-musl.tar.gz, the static build).
const CPUS = { X64: 'x86_64', ARM64: 'aarch64' };

// The archive's name for this runner, or a UsageError that says what exists.
function archiveName(version, os, arch) {
  if (os !== 'Linux' || !CPUS[arch]) {
    throw new UsageError(
      `no redlock build for ${os || 'an unknown OS'} ${arch || ''} (RUNNER_OS, RUNNER_ARCH): ` +
        'redlock is built for Linux X64 and Linux ARM64; run this job on a Linux runner',
    );
  }
  return `redlock-${version}-${CPUS[arch]}-unknown-linux-musl.tar.gz`;
}

// A URL fit for a log line: user and password (a release host may want them) left out.
function shown(url) {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

// The bytes at `url`, following up to 5 redirects.
function download(url, redirects = 5) {
  const parsed = new URL(url);
  if (parsed.protocol === 'file:') return Promise.resolve(fs.readFileSync(parsed));
  const client = { 'http:': http, 'https:': https }[parsed.protocol];
  if (!client) {
    return Promise.reject(new UsageError(`release-url ${shown(url)}: give an http, https or file URL`));
  }
  return new Promise((resolve, reject) => {
    const request = client.get(parsed, { timeout: 60000 }, (response) => {
      const { statusCode, headers } = response;
      if (statusCode >= 300 && statusCode < 400 && headers.location && redirects > 0) {
        response.resume();
        resolve(download(new URL(headers.location, parsed).toString(), redirects - 1));
        return;
      }
      if (statusCode !== 200) {
        response.resume();
        reject(new Error(`downloading ${shown(url)}: HTTP ${statusCode}; check release-url and version`));
        return;
      }
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => resolve(Buffer.concat(chunks)));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`downloading ${shown(url)}: no answer in 60 s`)));
    request.on('error', (error) => reject(new Error(`downloading ${shown(url)}: ${error.message}`)));
  });
}

// The sum SHA256SUMS gives `name` (`SUM  NAME` or `SUM *NAME` lines), or a clear error.
function listedSum(sums, name, arch) {
  for (const line of sums.toString('utf8').split('\n')) {
    const match = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trim());
    if (match && match[2] === name) return match[1];
  }
  const what = arch === 'ARM64' ? `no Linux ARM64 build (${name})` : `no ${name}`;
  throw new UsageError(`the release's SHA256SUMS lists ${what}: check release-url and version`);
}

// Installs `version` from `releaseUrl`; returns the directory that holds `redlock`.
async function install({ releaseUrl, version, sha256 }) {
  if (!/^[0-9A-Za-z.+-]+$/.test(version)) {
    throw new UsageError(`version ${JSON.stringify(version)}: give a release's version, such as 0.1.0`);
  }
  const arch = process.env.RUNNER_ARCH;
  const name = archiveName(version, process.env.RUNNER_OS, arch);
  const cache = process.env.RUNNER_TOOL_CACHE;
  if (!cache) throw new UsageError('RUNNER_TOOL_CACHE is not set: this must run as a step of a GitHub Actions job');
  const dir = path.join(cache, 'redlock', version, arch.toLowerCase());
  if (fs.existsSync(`${dir}.complete`) && fs.existsSync(path.join(dir, 'redlock'))) {
    process.stderr.write(`redlock ${version} from the tool cache (${dir})\n`);
    return dir;
  }
  const base = releaseUrl.replace(/\/+$/, '');
  const want = sha256 ? sha256.toLowerCase() : listedSum(await download(`${base}/SHA256SUMS`), name, arch);
  if (!/^[0-9a-f]{64}$/.test(want)) {
    throw new UsageError(`sha256 ${JSON.stringify(sha256)}: give the archive's SHA-256 sum, 64 hex digits`);
  }
  const archive = await download(`${base}/${name}`);
  const got = crypto.createHash('sha256').update(archive).digest('hex');
  if (got !== want) {
    throw new Error(`${name} from ${shown(base)} has SHA-256 ${got}, not ${want}: not installed`);
  }
  // Unpacked in the cache (one file system: the rename cannot fail across devices) and
  // renamed into place, so that a cancel never leaves half an install that a later job would
  // take for a whole one (the .complete mark comes last).
  fs.mkdirSync(path.join(cache, 'redlock'), { recursive: true });
  const temp = fs.mkdtempSync(path.join(cache, 'redlock', '.install-'));
  const file = path.join(temp, name);
  fs.writeFileSync(file, archive);
  execFileSync('tar', ['-xzf', file, '-C', temp], { stdio: ['ignore', 'ignore', 'inherit'] });
  const unpacked = path.join(temp, name.replace(/\.tar\.gz$/, ''));
  if (!fs.existsSync(path.join(unpacked, 'redlock'))) {
    throw new Error(`${name} holds no ${path.basename(unpacked)}/redlock: not a redlock release archive`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  fs.renameSync(unpacked, dir);
  fs.writeFileSync(`${dir}.complete`, '');
  fs.rmSync(temp, { recursive: true, force: true });
  process.stderr.write(`redlock ${version} installed from ${shown(base)} (${dir})\n`);
  return dir;
}

module.exports = { install, archiveName };
