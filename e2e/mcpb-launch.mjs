// Launches vault-rag's Claude Desktop bundle the way Claude Desktop does, and
// checks that it answers from the demo vault:
//
//   1. unpack the .mcpb with the official CLI (`mcpb unpack`);
//   2. resolve the platform's entry of mcp_config (platform_overrides) and
//      substitute ${__dirname} and ${user_config.*} with the official
//      library's own function (getMcpConfigForManifest); the vault setting
//      is a copy of the demo vault, the exclude setting its default;
//   3. spawn the command with the manifest's environment and nothing else
//      but HOME (a fresh temporary folder) and PATH;
//   4. run an MCP session with the official TypeScript SDK: initialize,
//      tools/list (the manifest's tools), the first build awaited (by
//      vault_reindex when listed, else by searching until the vectors are
//      all there), vault_search, which must find the demo note;
//   5. check that the index went to the per-user data folder under that
//      HOME, and nothing was written into the unpacked bundle;
//   6. launch it again with a vault folder that does not exist: initialize
//      must still be answered, and vault_search must say what is wrong.
//
// The per-user data folder's models/ is seeded from the checkout's
// data/models (the English embedder), so a run does not fetch 35 MB; the
// fetch on first use itself is checked by scripts/dist-test.sh.
//
// Usage: node e2e/mcpb-launch.mjs --mcpb-cli PATH [--mcpb FILE]
//          [--platform linux|win32|darwin] [--wrap CMD] [--windows-paths]
//          [--data-folder DIR] [--pass-env NAME]...
//   --platform       the platform_overrides entry to run (default: this OS)
//   --wrap CMD       run the command through CMD (e.g. wine for win32)
//   --windows-paths  give the program Windows paths (Z:\...) for the bundle
//                    folder and the vault, as wine maps the Unix root
//   --data-folder    the per-user data folder the program will use (default:
//                    the platform's under the temporary HOME; under wine it
//                    is the wine prefix's %LOCALAPPDATA%\vault-rag)
//   --pass-env NAME  also pass this variable (e.g. WINEPREFIX)
// The last line is "mcpb-launch: N passed, M failed"; exit 1 on a failure.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { Tally, callTool as callToolJSON, checkDemoSession } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const CALL_TIMEOUT_MS = 600_000; // the first vault_reindex waits for a full build

function parseArgs(argv) {
  const o = { platform: process.platform, passEnv: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case '--mcpb-cli': o.cli = path.resolve(next()); break;
      case '--mcpb': o.mcpb = path.resolve(next()); break;
      case '--platform': o.platform = next(); break;
      case '--wrap': o.wrap = next(); break;
      case '--windows-paths': o.windowsPaths = true; break;
      case '--data-folder': o.dataFolder = path.resolve(next()); break;
      case '--pass-env': o.passEnv.push(next()); break;
      default: throw new Error(`unknown argument ${a}`);
    }
  }
  if (!o.cli) throw new Error('--mcpb-cli names the mcpb CLI (make mcpb-test passes it)');
  if (!['linux', 'win32', 'darwin'].includes(o.platform)) throw new Error(`--platform ${o.platform}: want linux, win32 or darwin`);
  if (!o.mcpb) {
    const dist = path.join(repo, 'dist');
    const found = fs.existsSync(dist) ? fs.readdirSync(dist).filter((f) => f.endsWith('.mcpb'))
      .map((f) => path.join(dist, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs) : [];
    if (found.length === 0) throw new Error('no dist/*.mcpb (run `make mcpb` first)');
    o.mcpb = found[0];
  }
  return o;
}

const tally = new Tally();
const { check } = tally;

// userDataFolder is where the program keeps its data on a platform, under
// HOME (models.UserDataDir).
function userDataFolder(platform, home) {
  switch (platform) {
    case 'darwin': return path.join(home, 'Library', 'Application Support', 'vault-rag');
    case 'linux': return path.join(home, '.local', 'share', 'vault-rag');
  }
  return null; // win32: %LOCALAPPDATA%, which the wrapper decides
}

const toWindows = (p) => 'Z:' + p.replaceAll('/', '\\');

// listFiles lists every file under dir, relative.
function listFiles(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.relative(dir, path.join(e.parentPath ?? e.path, e.name)));
  }
  return out.sort();
}

const callTool = (client, name, args) => callToolJSON(client, name, args, CALL_TIMEOUT_MS);

// launch resolves the manifest's entry for o.platform with the given
// settings, as Claude Desktop does, and connects an MCP client to it.
async function launch(o, mcpbLib, manifest, bundleDir, home, userConfig, label) {
  // getMcpConfigForManifest applies process.platform's override: apply the
  // chosen platform's here, so any entry can be run from this machine.
  const m = structuredClone(manifest);
  const cfg = m.server.mcp_config;
  const ov = cfg.platform_overrides?.[o.platform];
  if (!ov) throw new Error(`the bundle has no platform_overrides entry for ${o.platform}`);
  Object.assign(cfg, Object.fromEntries(Object.entries(ov).filter(([, v]) => v !== undefined)));
  delete cfg.platform_overrides;
  const win = o.windowsPaths;
  const conf = await mcpbLib.getMcpConfigForManifest({
    manifest: m,
    extensionPath: win ? toWindows(bundleDir) : bundleDir,
    systemDirs: { HOME: win ? toWindows(home) : home },
    userConfig: win ? { ...userConfig, vault: toWindows(userConfig.vault) } : userConfig,
    pathSeparator: win ? '\\' : '/',
  });
  if (!conf) throw new Error('getMcpConfigForManifest returned nothing: a required setting is missing');
  const env = { ...(conf.env ?? {}), HOME: home, PATH: process.env.PATH };
  for (const k of o.passEnv) if (process.env[k] !== undefined) env[k] = process.env[k];
  let command = conf.command;
  let args = conf.args ?? [];
  if (o.wrap) {
    args = [command, ...args];
    command = o.wrap;
  }
  console.log(`# ${label}: ${[command, ...args].join(' ')}`);
  console.log(`#   env: ${Object.keys(env).sort().map((k) => `${k}=${env[k]}`).join(' ')}`);
  const transport = new StdioClientTransport({ command, args, env, cwd: home, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'mcpb-launch', version: '0' });
  await client.connect(transport, { timeout: 120_000 });
  return { client, conf, stderr: () => stderr };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const pkg = path.resolve(path.dirname(o.cli), '..', '@anthropic-ai', 'mcpb');
  const mcpbLib = await import(pathToFileURL(path.join(pkg, 'dist', 'index.js')).href);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpb-launch-'));
  try {
    // 1. Unpack, as the client installs it.
    const bundleDir = path.join(tmp, 'extension');
    const un = spawnSync(o.cli, ['unpack', o.mcpb, bundleDir], { encoding: 'utf8' });
    check(`mcpb unpack ${path.basename(o.mcpb)}`, un.status === 0, un.stderr || un.stdout);
    if (un.status !== 0) return;
    const manifest = JSON.parse(fs.readFileSync(path.join(bundleDir, 'manifest.json'), 'utf8'));
    check(`the bundle supports ${o.platform}`, manifest.compatibility?.platforms?.includes(o.platform),
      JSON.stringify(manifest.compatibility?.platforms));
    const before = listFiles(bundleDir);

    // The settings: a copy of the demo vault, the exclude default.
    const home = path.join(tmp, 'home');
    fs.mkdirSync(home);
    const vault = path.join(tmp, 'vault');
    fs.cpSync(path.join(repo, 'vault'), vault, { recursive: true });
    const data = o.dataFolder ?? userDataFolder(o.platform, home);
    if (!data) throw new Error(`--data-folder is needed for ${o.platform}: where the program's %LOCALAPPDATA%\\vault-rag is`);
    const model = 'bge-small-en-v1.5-q';
    const seed = path.join(repo, 'data', 'models', model);
    if (!fs.existsSync(path.join(seed, 'installed.json'))) throw new Error(`${seed} is not installed (make setup)`);
    fs.cpSync(seed, path.join(data, 'models', model), { recursive: true });
    console.log(`# seeded ${path.join(data, 'models', model)} from data/models (no fetch)`);

    // 2-4. The session.
    const { client, stderr } = await launch(o, mcpbLib, manifest, bundleDir, home, { vault }, 'launch');
    try {
      await checkDemoSession(client, check, manifest.tools.map((t) => t.name), CALL_TIMEOUT_MS);
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name).sort();
      const want = manifest.tools.map((t) => t.name).sort();
      check('tools/list lists exactly the manifest\'s tools', JSON.stringify(names) === JSON.stringify(want), `${names} vs ${want}`);
    } finally {
      await client.close();
    }
    if (tally.failed > 0) console.log(`# server stderr:\n${stderr()}`);

    // 5. Where things went.
    const indexes = path.join(data, 'indexes');
    check('the index is in the per-user data folder', fs.existsSync(indexes) &&
      fs.readdirSync(indexes).some((f) => f.endsWith('.db')), indexes);
    const after = listFiles(bundleDir);
    check('nothing was written into the bundle folder', JSON.stringify(before) === JSON.stringify(after),
      after.filter((f) => !before.includes(f)).join(', '));

    // 6. A vault folder that does not exist.
    const missing = path.join(tmp, 'no-such-vault');
    const second = await launch(o, mcpbLib, manifest, bundleDir, home, { vault: missing }, 'missing vault');
    try {
      check('a missing vault folder: initialize is answered', second.client.getServerVersion()?.name === 'vault-rag');
      const r = await callTool(second.client, 'vault_search', { query: 'lease' });
      check('a missing vault folder: vault_search says what is wrong and where to fix it',
        r.isError && r.text.includes('does not exist') && r.text.includes('settings'), r.text.slice(0, 400));
    } finally {
      await second.client.close();
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (err) {
  tally.failed++;
  console.log(`not ok - ${err.message}`);
}
console.log(`mcpb-launch: ${tally.passed} passed, ${tally.failed} failed`);
process.exit(tally.failed > 0 ? 1 : 0);
