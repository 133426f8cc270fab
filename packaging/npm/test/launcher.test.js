// Unit tests of the npm launcher (packaging/npm/vault-rag/lib/launch.js), no
// network: platform resolution, the errors on a machine without a build or
// without its platform package, the environment the binary gets, and — with
// a stand-in binary laid out as npm installs the packages — stdio, the exit
// status, signal forwarding and death by signal.
//
//   node --test packaging/npm/test/
'use strict';

const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const test = require('node:test');

const src = path.resolve(__dirname, '..', 'vault-rag');
const launch = require(path.join(src, 'lib', 'launch.js'));

const manifest = {
  name: 'vault-rag',
  version: '1.2.3',
  platformPackages: {
    'linux-x64': '@vault-rag/linux-x64', 'linux-arm64': '@vault-rag/linux-arm64',
    'darwin-arm64': '@vault-rag/darwin-arm64', 'win32-x64': '@vault-rag/win32-x64',
  },
  optionalDependencies: {
    '@vault-rag/linux-x64': '1.2.3', '@vault-rag/linux-arm64': '1.2.3',
    '@vault-rag/darwin-arm64': '1.2.3', '@vault-rag/win32-x64': '1.2.3',
  },
};
const glibc = { family: 'glibc', version: '2.36' };

test('each supported platform maps to its package', () => {
  assert.equal(launch.platformPackage(manifest, 'linux', 'x64', glibc), '@vault-rag/linux-x64');
  assert.equal(launch.platformPackage(manifest, 'linux', 'arm64', glibc), '@vault-rag/linux-arm64');
  assert.equal(launch.platformPackage(manifest, 'darwin', 'arm64', null), '@vault-rag/darwin-arm64');
  assert.equal(launch.platformPackage(manifest, 'win32', 'x64', null), '@vault-rag/win32-x64');
});

test('a platform without a build is refused, saying which exist', () => {
  assert.throws(() => launch.platformPackage(manifest, 'darwin', 'x64', null),
    (e) => e instanceof launch.LaunchError && /no build for darwin x64/.test(e.message) && /Intel Mac/.test(e.message) && /Windows x64/.test(e.message));
  assert.throws(() => launch.platformPackage(manifest, 'win32', 'arm64', null), /no build for win32 arm64/);
  assert.throws(() => launch.platformPackage(manifest, 'linux', 'x64', { family: 'musl', version: '' }), /musl.*Alpine/);
});

test('libcOf reads Node\'s report', () => {
  assert.deepEqual(launch.libcOf({ header: { glibcVersionRuntime: '2.31' } }), { family: 'glibc', version: '2.31' });
  assert.deepEqual(launch.libcOf({ header: {} }), { family: 'musl', version: '' });
  assert.ok(launch.versionLess('2.31', '2.34') && !launch.versionLess('2.34', '2.34') && launch.versionLess('2.9', '2.10'));
});

// fakeInstall lays out node_modules as npm does: the launcher package and a
// platform package whose bin/vault-rag is script (a stand-in binary).
function fakeInstall(t, { script, platformMeta = {} } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'launcher-test-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const nm = path.join(root, 'node_modules');
  const launcher = path.join(nm, 'vault-rag');
  fs.cpSync(src, launcher, { recursive: true });
  const key = `${process.platform}-${process.arch}`;
  const name = `@vault-rag/${key}`;
  fs.writeFileSync(path.join(launcher, 'package.json'), JSON.stringify({
    ...manifest, platformPackages: { [key]: name }, optionalDependencies: { [name]: '1.2.3' },
  }));
  if (script !== undefined) {
    const dir = path.join(nm, '@vault-rag', key);
    fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version: '1.2.3', ...platformMeta }));
    fs.writeFileSync(path.join(dir, 'bin', 'vault-rag'), script, { mode: 0o755 });
  }
  return { root, launcher, bin: path.join(launcher, 'bin', 'vault-rag.js') };
}

const posix = process.platform !== 'win32';

test('findBinary resolves the platform package from the launcher\'s folder', { skip: !posix }, (t) => {
  const { launcher } = fakeInstall(t, { script: '#!/bin/sh\n' });
  const req = require('node:module').createRequire(path.join(launcher, 'lib', 'launch.js'));
  const found = launch.findBinary({ manifest: { ...manifest }, resolve: req.resolve, libc: process.platform === 'linux' ? glibc : null });
  assert.equal(found.binary, path.join(launcher, '..', '@vault-rag', `${process.platform}-${process.arch}`, 'bin', 'vault-rag'));
});

test('a missing platform package: the platform, the package and the fix', () => {
  const resolve = () => { throw Object.assign(new Error('Cannot find module'), { code: 'MODULE_NOT_FOUND' }); };
  assert.throws(() => launch.findBinary({ manifest, platform: 'linux', arch: 'arm64', libc: glibc, resolve }), (e) => {
    assert.ok(e instanceof launch.LaunchError);
    assert.match(e.message, /this platform \(linux arm64\), @vault-rag\/linux-arm64@1\.2\.3, is not installed/);
    assert.match(e.message, /npm install --include=optional vault-rag@1\.2\.3/);
    assert.match(e.message, /package-lock\.json/);
    assert.match(e.message, /release archive/);
    return true;
  });
});

test('a binary missing, not executable, or too new for the glibc: said so', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'launcher-test-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: '@vault-rag/linux-x64', vaultRag: { glibc: '2.34' } }));
  const resolve = () => path.join(dir, 'package.json');
  const base = { manifest, platform: 'linux', arch: 'x64', resolve };
  assert.throws(() => launch.findBinary({ ...base, libc: { family: 'glibc', version: '2.31' } }),
    /needs glibc 2\.34 or later, and this system has 2\.31/);
  assert.throws(() => launch.findBinary({ ...base, libc: glibc, exists: () => false }), /bin\/vault-rag is missing/);
  assert.throws(() => launch.findBinary({ ...base, libc: glibc, exists: () => true, executable: () => false }), /is not executable.*chmod \+x/);
  const ok = launch.findBinary({ ...base, libc: glibc, exists: () => true, executable: () => true });
  assert.equal(ok.binary, path.join(dir, 'bin', 'vault-rag'));
  // Windows: the .exe, and no executable bit to check.
  const win = launch.findBinary({ ...base, platform: 'win32', libc: null, exists: (p) => p.endsWith('vault-rag.exe'), executable: () => false,
    manifest: { ...manifest, platformPackages: { 'win32-x64': '@vault-rag/win32-x64' } } });
  assert.ok(win.binary.endsWith(path.join('bin', 'vault-rag.exe')));
});

test('the binary learns how it was launched', () => {
  const env = launch.launchEnv({ env: { HOME: '/h' }, launcherDir: '/h/.npm/_npx/0a1b/node_modules/vault-rag/lib', manifest, node: '/opt/node/bin/node',
    platform: 'linux', exists: (p) => p === '/opt/node/bin/npx' });
  assert.deepEqual(env, { HOME: '/h', VAULT_RAG_INSTALL: 'npx', VAULT_RAG_PACKAGE: 'vault-rag@1.2.3', VAULT_RAG_NODE: '/opt/node/bin/node', VAULT_RAG_RUNNER: '/opt/node/bin/npx' });
  const installed = launch.launchEnv({ env: {}, launcherDir: '/usr/lib/node_modules/vault-rag/lib', manifest, node: '/usr/bin/node', platform: 'linux', exists: () => false });
  assert.equal(installed.VAULT_RAG_INSTALL, 'npm');
  assert.equal(installed.VAULT_RAG_RUNNER, '');
  // Windows: backslashes, and npx.cmd beside node.exe.
  const win = launch.launchEnv({ env: {}, launcherDir: 'C:\\Users\\u\\AppData\\Local\\npm-cache\\_npx\\9f\\node_modules\\vault-rag\\lib', manifest,
    node: 'C:\\Program Files\\nodejs\\node.exe', platform: 'win32', exists: () => true });
  assert.equal(win.VAULT_RAG_INSTALL, 'npx');
  assert.match(win.VAULT_RAG_RUNNER, /npx\.cmd$/);
});

// runLauncher runs bin/vault-rag.js of a fake install and returns
// {code, signal, stdout, stderr}.
function runLauncher(bin, args, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['pipe', 'pipe', 'pipe'], ...opts });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; if (opts.onStdout) opts.onStdout(child, stdout); });
    child.stderr.on('data', (d) => { stderr += d; });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

test('stdio, arguments, environment and the exit status pass through', { skip: !posix }, async (t) => {
  const { bin } = fakeInstall(t, { script: '#!/bin/sh\necho "args:$*"\necho "via:$VAULT_RAG_INSTALL $VAULT_RAG_PACKAGE"\ncat\necho err >&2\nexit 7\n' });
  const r = await runLauncher(bin, ['serve', '--transport', 'stdio'], { input: '{"jsonrpc":"2.0"}\n' });
  assert.equal(r.code, 7);
  assert.equal(r.stdout, 'args:serve --transport stdio\nvia:npm vault-rag@1.2.3\n{"jsonrpc":"2.0"}\n');
  assert.equal(r.stderr, 'err\n');
});

test('a signal to the launcher reaches the binary, whose exit status is passed on', { skip: !posix }, async (t) => {
  const { bin } = fakeInstall(t, { script: '#!/bin/sh\ntrap \'echo got-TERM; exit 42\' TERM\necho ready\nwhile :; do sleep 0.05; done\n' });
  const r = await runLauncher(bin, [], { onStdout: (child, out) => { if (out === 'ready\n') child.kill('SIGTERM'); } });
  assert.equal(r.stdout, 'ready\ngot-TERM\n');
  assert.equal(r.code, 42);
});

test('a binary killed by a signal: the launcher dies by the same signal', { skip: !posix }, async (t) => {
  const { bin } = fakeInstall(t, { script: '#!/bin/sh\nkill -KILL $$\n' });
  const r = await runLauncher(bin, []);
  assert.equal(r.signal, 'SIGKILL');
  assert.equal(r.code, null);
});

test('without the platform package: exit 1 and the fix, nothing started', { skip: !posix }, async (t) => {
  const { bin } = fakeInstall(t);
  const r = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(`this platform \\(${process.platform} ${process.arch}\\)`));
  assert.match(r.stderr, /npm install --include=optional/);
});
