// launch.js runs vault-rag's binary from the package npm installed for this
// platform, the way esbuild and biome do: the `vault-rag` package lists one
// package per platform as exact-pinned optionalDependencies, each with `os`,
// `cpu` (and on Linux `libc`) fields, so npm installs only the one that fits.
// That package holds the release archive's folder: bin/ (the binary), lib/
// (ONNX Runtime, which the binary loads from ../lib) and configs/.
//
// The binary runs as a child with this process's stdin, stdout and stderr
// (an MCP client speaks to it directly over them); signals sent to this
// process are passed on, and its exit status (or the signal that ended it)
// becomes this process's. No dependencies: only Node's own modules.
'use strict';

const childProcess = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const pkg = require('../package.json');

// SUPPORTED names the builds that exist, for the error on any other machine.
const SUPPORTED = 'Linux x64 and arm64 (glibc), macOS on Apple silicon (arm64), Windows x64';

class LaunchError extends Error {}

// nodeReport is Node's diagnostic report, without the network part, which
// can take a while to gather and is not needed here.
function nodeReport() {
  if ('excludeNetwork' in process.report) process.report.excludeNetwork = true;
  return process.report.getReport();
}

// libcOf is the C library of a Linux machine, from Node's own report:
// 'glibc' with its version, else 'musl' (Alpine and other musl systems).
function libcOf(report = nodeReport()) {
  const v = report && report.header && report.header.glibcVersionRuntime;
  return v ? { family: 'glibc', version: v } : { family: 'musl', version: '' };
}

// versionLess compares dotted versions numerically.
function versionLess(a, b) {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] || 0) - (y[i] || 0);
    if (d !== 0) return d < 0;
  }
  return false;
}

// platformPackage is the name of the package for a platform and CPU (Node's
// names: process.platform, process.arch), or a LaunchError saying there is
// no build for it.
function platformPackage(manifest, platform, arch, libc) {
  const key = `${platform}-${arch}`;
  const name = (manifest.platformPackages || {})[key];
  if (platform === 'linux' && libc && libc.family !== 'glibc') {
    throw new LaunchError(`vault-rag: there is no build for Linux with ${libc.family} (Alpine and other musl systems); builds exist for ${SUPPORTED}. Use a glibc system or container (e.g. Debian), or build from source.`);
  }
  if (!name) {
    let why = '';
    if (platform === 'darwin' && arch === 'x64') why = ' An Intel Mac is not supported: ONNX Runtime ships no build for it.';
    throw new LaunchError(`vault-rag: there is no build for ${platform} ${arch}; builds exist for ${SUPPORTED}.${why}`);
  }
  return name;
}

// findBinary resolves this platform's package from the launcher's own folder
// and returns its binary, checked, or throws a LaunchError that names the
// platform and the fix. resolve is require.resolve; the rest is for tests.
function findBinary({
  manifest = pkg,
  platform = process.platform,
  arch = process.arch,
  libc = platform === 'linux' ? libcOf() : null,
  resolve = require.resolve,
  exists = fs.existsSync,
  executable = (p) => { try { fs.accessSync(p, fs.constants.X_OK); return true; } catch { return false; } },
} = {}) {
  const name = platformPackage(manifest, platform, arch, libc);
  const version = (manifest.optionalDependencies || {})[name] || manifest.version;
  let dir;
  try {
    dir = path.dirname(resolve(`${name}/package.json`));
  } catch {
    throw new LaunchError([
      `vault-rag: the package of this platform (${platform} ${arch}), ${name}@${version}, is not installed.`,
      `npm installs it as an optional dependency of ${manifest.name}; it is left out when optional`,
      'dependencies are omitted (--omit=optional, --no-optional) or when a package-lock.json written on',
      'another OS is reused. To fix it:',
      `  npm install --include=optional ${manifest.name}@${manifest.version}`,
      '  or remove node_modules and package-lock.json and install again;',
      `  with npx: npx -y ${manifest.name}@${manifest.version} (after \`npm cache clean --force\` if it still fails);`,
      '  or use the release archive for your platform, which needs no Node.js.',
    ].join('\n'));
  }
  let meta = {};
  try {
    meta = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  } catch { /* checked below through the binary */ }
  const floor = meta.vaultRag && meta.vaultRag.glibc;
  if (libc && libc.family === 'glibc' && floor && libc.version && versionLess(libc.version, floor)) {
    throw new LaunchError(`vault-rag: this build needs glibc ${floor} or later, and this system has ${libc.version}; use the release archive on a newer system, or build from source.`);
  }
  const binary = path.join(dir, 'bin', platform === 'win32' ? 'vault-rag.exe' : 'vault-rag');
  if (!exists(binary)) {
    throw new LaunchError(`vault-rag: ${binary} is missing: the package ${name} is incomplete. Reinstall it: npm install --include=optional ${manifest.name}@${manifest.version}`);
  }
  if (platform !== 'win32' && !executable(binary)) {
    throw new LaunchError(`vault-rag: ${binary} is not executable (its file mode was lost on the way). Reinstall the package, or run: chmod +x "${binary}"`);
  }
  return { name, dir, binary };
}

// launchEnv is the binary's environment: this process's, plus how it was
// launched (the binary's connect writes a configuration that launches it
// the same way): npx when this launcher runs from npx's cache, npm when it
// is installed; the package and its exact version; node; and the npx beside
// node.
function launchEnv({ env = process.env, launcherDir = __dirname, manifest = pkg, node = process.execPath, platform = process.platform, exists = fs.existsSync } = {}) {
  const sep = platform === 'win32' ? /[\\/]_npx[\\/]/ : /\/_npx\//;
  const npx = path.join(path.dirname(node), platform === 'win32' ? 'npx.cmd' : 'npx');
  return {
    ...env,
    VAULT_RAG_INSTALL: sep.test(launcherDir) ? 'npx' : 'npm',
    VAULT_RAG_PACKAGE: `${manifest.name}@${manifest.version}`,
    VAULT_RAG_NODE: node,
    VAULT_RAG_RUNNER: exists(npx) ? npx : '',
  };
}

// FORWARDED are the signals passed on to the binary. On Windows a console's
// Ctrl+C reaches both processes anyway, and there is nothing else to pass.
const FORWARDED = process.platform === 'win32' ? [] : ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

// run starts the binary with args and ends this process as the binary ends.
function run(binary, args, env) {
  const child = childProcess.spawn(binary, args, { stdio: 'inherit', env, windowsHide: true });
  const handlers = {};
  for (const sig of FORWARDED) {
    handlers[sig] = () => { try { child.kill(sig); } catch { /* already gone */ } };
    process.on(sig, handlers[sig]);
  }
  if (process.platform === 'win32') process.on('SIGINT', () => {}); // wait for the binary's own exit
  child.on('error', (err) => {
    process.stderr.write(`vault-rag: could not start ${binary}: ${err.message}\n`);
    process.exit(err.code === 'ENOENT' || err.code === 'EACCES' ? 127 : 1);
  });
  child.on('exit', (code, signal) => {
    for (const sig of FORWARDED) process.removeListener(sig, handlers[sig]);
    if (signal) {
      // End the same way, so whoever started npx sees the signal.
      process.kill(process.pid, signal);
      const n = require('node:os').constants.signals[signal] || 0;
      setTimeout(() => process.exit(128 + n), 100);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

function main() {
  let found;
  try {
    found = findBinary();
  } catch (err) {
    if (!(err instanceof LaunchError)) throw err;
    process.stderr.write(err.message + '\n');
    process.exit(1);
  }
  run(found.binary, process.argv.slice(2), launchEnv());
}

module.exports = { LaunchError, findBinary, launchEnv, libcOf, main, platformPackage, run, versionLess };
