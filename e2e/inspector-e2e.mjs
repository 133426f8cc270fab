// End-to-end test of `vault-rag serve` with a second client nobody here wrote:
// the MCP Inspector's command-line client (@modelcontextprotocol/inspector-cli,
// pinned in package.json). It runs the CLI once per method and transport,
// non-interactively, and checks the JSON it prints: tools/list names the six
// tools, a tools/call of vault_search finds a known note of the demo vault,
// resources/list lists the notes as vault:// resources and resources/read
// returns one note's text. Over stdio the CLI spawns the server itself; over
// streamable HTTP it talks to a daemon on a free loopback port.
//
// Like mcp-e2e.mjs it runs against a temporary copy of the demo vault and a
// temporary index (seeded with the demo index's embedding cache when there is
// one). The index is built with `vault-rag reindex` before the CLI runs: the
// CLI's requests time out after the SDK's default 60 s, and this tests the
// client, not the first build.
//
// Usage: node inspector-e2e.mjs   (from e2e/, after `make build` and `npm ci`; `make e2e` runs it)
// The last line is "inspector-e2e: N passed, M failed"; the exit code is 1 on any failure.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { bin, dataDir, demoCopy, exited, freePort, repo, waitForHealth } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const cliDir = path.join(here, 'node_modules', '@modelcontextprotocol', 'inspector-cli');
// The package's command (mcp-inspector-cli); --cli selects the command-line
// client, which it runs as a child process.
const cli = path.join(cliDir, 'build', 'cli.js');
// The default tool set (serve --tools, VAULT_RAG_TOOLS): mcp-e2e.mjs exercises every tool.
const TOOLS = ['vault_grep', 'vault_read', 'vault_search'];
// A query and the demo note it must find among the first five.
const QUERY = 'how do I keep a sourdough starter alive';
const KNOWN = 'personal/baking/sourdough-starter.md';
const CLI_TIMEOUT_MS = 90_000;

let passed = 0;
let failed = 0;

function check(name, ok, detail = '') {
  if (ok) {
    passed++;
    console.log(`PASS ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}${detail ? `: ${detail}` : ''}`);
  }
}

// inspect runs `mcp-inspector-cli --cli` with args and returns {json, out, err,
// status}: json is its stdout parsed, null when it printed no JSON or failed.
function inspect(args, env) {
  // The CLI reads its own version from "../package.json" relative to the
  // working folder (falling back to a path that does not exist in an npm
  // install), so it runs from its build/ folder.
  const r = spawnSync(process.execPath, [cli, '--cli', ...args], {
    cwd: path.join(cliDir, 'build'), env, encoding: 'utf8', timeout: CLI_TIMEOUT_MS, killSignal: 'SIGKILL',
  });
  let json = null;
  if (r.status === 0) {
    try {
      json = JSON.parse(r.stdout);
    } catch {
      json = null;
    }
  }
  const status = r.error ? `${r.error.code ?? r.error.message}` : r.signal ? `signal ${r.signal}` : r.status;
  return { json, out: r.stdout ?? '', err: r.stderr ?? '', status };
}

const brief = (r) => `exit ${r.status}; stdout ${r.out.slice(0, 300)}; stderr ${r.err.slice(-300)}`;
const pathOf = (uri) => (uri.startsWith('vault://') ? decodeURIComponent(uri.slice('vault://'.length)) : null);
const uriOf = (p) => 'vault://' + p.split('/').map(encodeURIComponent).join('/');

// exercise runs every method through the CLI; target is what the CLI connects
// to and how (the server command, or the /mcp URL with --transport http).
function exercise(label, target, env) {
  const c = (name, ok, detail) => check(`${label}: ${name}`, ok, detail);

  const list = inspect([...target, '--method', 'tools/list'], env);
  const names = (list.json?.tools ?? []).map((t) => t.name).sort();
  c("tools/list names the server's tools", JSON.stringify(names) === JSON.stringify(TOOLS), `${JSON.stringify(names)}; ${brief(list)}`);

  const call = inspect([...target, '--method', 'tools/call', '--tool-name', 'vault_search',
    '--tool-arg', `query=${QUERY}`, '--tool-arg', 'k=5'], env);
  let found = null;
  found = call.json?.structuredContent ?? null;
  const hits = (found?.notes ?? []).map((n) => n.path);
  c(`tools/call vault_search finds ${KNOWN}`, call.json?.isError !== true && hits.length >= 1 && hits.length <= 5 && hits.includes(KNOWN),
    `${JSON.stringify(hits)}; ${brief(call)}`);

  const res = inspect([...target, '--method', 'resources/list'], env);
  const resources = res.json?.resources ?? [];
  const known = resources.find((x) => pathOf(x.uri) === KNOWN);
  c('resources/list lists the notes as vault:// resources', resources.length > 0 &&
    resources.every((x) => typeof x.uri === 'string' && x.uri.startsWith('vault://') && typeof x.name === 'string') && known !== undefined,
    `${resources.length} resources; ${brief(res)}`);

  const uri = known?.uri ?? uriOf(KNOWN);
  const read = inspect([...target, '--method', 'resources/read', '--uri', uri], env);
  const body = read.json?.contents?.[0];
  // The text is the note after its front matter (which comes as _meta).
  const note = fs.readFileSync(path.join(repo, 'vault', KNOWN), 'utf8');
  c('resources/read returns the note', body?.uri === uri && body?.mimeType === 'text/markdown' && typeof body?.text === 'string' &&
    body.text.includes('# Sourdough starter') && note.endsWith(body.text) && body._meta?.date === '2025-02-16',
    `${JSON.stringify(body ?? null).slice(0, 200)}; ${brief(read)}`);

  const bad = inspect([...target, '--method', 'resources/read', '--uri', 'vault://..%2Fetc%2Fpasswd'], env);
  c('resources/read outside the vault is refused', bad.status === 1 && bad.out.trim() === '' && /refused.*may not leave the vault/.test(bad.err),
    brief(bad));
}


async function main() {
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: run \`make build\``);
  if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: run \`npm ci\` in e2e/`);
  const { tmp, vault, db, env } = demoCopy('vault-rag-inspector-');
  let daemon = null;
  const logs = [];
  try {
    const built = spawnSync(bin, ['reindex', '--vault', vault, '--db', db], { env, cwd: tmp, encoding: 'utf8', timeout: 300_000 });
    check('the index of the copy builds', built.status === 0, `exit ${built.status}: ${(built.stderr ?? '').slice(-500)}`);
    if (built.status !== 0) return;

    // The CLI itself runs without the server's settings: over stdio it hands
    // them to the server it spawns with -e, as a user would.
    const cliEnv = { ...process.env };
    for (const k of Object.keys(cliEnv)) if (k.startsWith('VAULT_RAG_') || k === 'VAULT_PATH' || k === 'DB_PATH') delete cliEnv[k];

    // 1. stdio: the CLI spawns `vault-rag serve` itself. The transport is
    // chosen with VAULT_RAG_TRANSPORT, not --transport stdio: the CLI's
    // launcher takes --transport for its own and does not pass it on.
    const serverEnv = { VAULT_PATH: vault, DB_PATH: db, VAULT_RAG_DATA: dataDir, VAULT_RAG_ROOT: repo,
      VAULT_RAG_CONFIG: env.VAULT_RAG_CONFIG, VAULT_RAG_TRANSPORT: 'stdio' };
    const dashE = Object.entries(serverEnv).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    exercise('stdio', [...dashE, bin, 'serve'], cliEnv);

    // 2. streamable HTTP: a daemon on a free loopback port, MCP at /mcp.
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    daemon = spawn(bin, ['serve', '--transport', 'http', '--addr', `127.0.0.1:${port}`], { env, cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
    daemon.stdout.on('data', (b) => logs.push(`[http stdout] ${b}`));
    daemon.stderr.on('data', (b) => logs.push(`[http] ${b}`));
    const health = await waitForHealth(`${base}/health`, daemon, 60_000);
    check('http: /health answers with the index', health.index === 'ok' && health.notes > 0, JSON.stringify(health).slice(0, 300));
    exercise('http', ['--transport', 'http', `${base}/mcp`], cliEnv);
  } finally {
    if (daemon) {
      daemon.kill('SIGTERM');
      const { code, signal } = await exited(daemon, 15_000);
      check('http: SIGTERM shuts the daemon down cleanly', code === 0, `code ${code} signal ${signal}`);
    }
    fs.rmSync(tmp, { recursive: true, force: true });
    if (failed > 0) process.stderr.write(logs.join(''));
  }
}

const guard = setTimeout(() => {
  console.log('FAIL the inspector e2e run took more than 10 minutes');
  console.log(`inspector-e2e: ${passed} passed, ${failed + 1} failed`);
  process.exit(1);
}, 600_000);
guard.unref();

try {
  await main();
} catch (err) {
  check('the run completes', false, err?.stack ?? String(err));
}
console.log(`inspector-e2e: ${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
