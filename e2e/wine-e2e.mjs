// The Windows build under wine, driven by the official MCP TypeScript SDK:
// a stdio session (initialize, tools/list, vault_search, vault_read), then a
// full reindex by a second process while this server keeps the index open and
// keeps answering. Nothing may be lost: the rebuild succeeds, every search
// made during it and after it returns notes, and the note and chunk counts
// after equal those before.
//
// Usage (scripts/wine/test.sh sets all of it up; `make wine-test` runs it):
//   WINE=data/wine/bin/wine64 VAULT_RAG_EXE=/path/vault-rag.exe \
//   VAULT_PATH='Z:\...\vault' DB_PATH='Z:\...\vault.db' VAULT_RAG_DATA='Z:\...' \
//   ONNXRUNTIME_LIB='Z:\...\onnxruntime.dll' node wine-e2e.mjs
// The index at DB_PATH must already be built (by `vault-rag.exe reindex`).
// The last line is "wine-e2e: N passed, M failed"; the exit code is 1 on any failure.

import { spawn } from 'node:child_process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { Tally, callTool as callToolJSON, finish } from './lib.mjs';

const wine = process.env.WINE ?? 'wine';
const exe = process.env.VAULT_RAG_EXE;
const CALL_TIMEOUT_MS = 300_000;
const REINDEX_TIMEOUT_MS = 600_000;
const QUERY = 'why did writes get slow in the middle of the night';

const tally = new Tally();
const { check } = tally;

const callTool = (client, name, args) => callToolJSON(client, name, args, CALL_TIMEOUT_MS);

// runReindex runs `vault-rag.exe reindex --json` (a full rebuild) in its own
// wine process and resolves with its exit code and output.
function runReindex(env) {
  return new Promise((resolve) => {
    const child = spawn(wine, [exe, 'reindex', '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => { stdout += b; });
    child.stderr.on('data', (b) => { stderr += b; });
    const timer = setTimeout(() => child.kill('SIGKILL'), REINDEX_TIMEOUT_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

async function main() {
  if (!exe) throw new Error('VAULT_RAG_EXE is not set');
  for (const k of ['VAULT_PATH', 'DB_PATH', 'VAULT_RAG_DATA', 'ONNXRUNTIME_LIB']) {
    if (!/^[A-Za-z]:\\/.test(process.env[k] ?? '')) throw new Error(`${k} must be a Windows path, got "${process.env[k] ?? ''}"`);
  }
  const env = { ...process.env };
  delete env.VAULT_RAG_TOKEN;
  delete env.VAULT_RAG_TRANSPORT;
  delete env.VAULT_RAG_ADDR;
  const logs = [];
  const transport = new StdioClientTransport({
    command: wine, args: [exe, 'serve', '--transport', 'stdio', '--tools', 'all'], env, stderr: 'pipe',
  });
  transport.stderr?.on('data', (b) => logs.push(`[serve] ${b}`));
  let protocolErrors = 0;
  transport.onerror = () => { protocolErrors++; };
  const client = new Client({ name: 'vault-rag-wine-e2e', version: '1.0.0' });
  try {
    // 1. The session.
    await client.connect(transport);
    check('initialize: the server is vault-rag', client.getServerVersion()?.name === 'vault-rag', JSON.stringify(client.getServerVersion()));
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    check('tools/list has vault_search, vault_read, vault_overview, vault_reindex',
      ['vault_search', 'vault_read', 'vault_overview', 'vault_reindex'].every((n) => names.includes(n)), JSON.stringify(names));

    const s = await callTool(client, 'vault_search', { query: QUERY, k: 3 });
    const notes = s.json?.notes ?? [];
    check('vault_search finds notes of the demo vault', !s.isError && notes.length >= 1 &&
      notes.every((n) => typeof n.path === 'string' && n.path.endsWith('.md') && !n.path.includes('\\')), s.text.slice(0, 300));
    const top = notes[0]?.path ?? 'knowledge/engineering/idempotency.md';
    const r = await callTool(client, 'vault_read', { path: top });
    check('vault_read returns the top note', !r.isError && r.json?.path === top && r.json.content.length > 0, r.text.slice(0, 300));
    const drive = await callTool(client, 'vault_read', { path: 'C:\\Windows\\win.ini' });
    check('vault_read refuses a drive-letter path', drive.isError, drive.text.slice(0, 200));

    const before = await callTool(client, 'vault_overview', {});
    check('vault_overview counts the index', !before.isError && before.json?.notes > 0 && before.json?.chunks > 0, before.text.slice(0, 300));
    console.log(`# before: ${before.json?.notes} notes, ${before.json?.chunks} chunks`);

    // 2. A full rebuild in a second process while this server holds the index
    // open, searching all the while.
    const t0 = Date.now();
    const reindex = runReindex(env);
    let done = null;
    reindex.then((r) => { done = r; });
    let during = 0;
    const bad = [];
    while (done === null) {
      const d = await callTool(client, 'vault_search', { query: QUERY, k: 3 });
      during++;
      if (d.isError || (d.json?.notes ?? []).length === 0) bad.push(d.text.slice(0, 200));
      await new Promise((res) => setTimeout(res, 250));
    }
    const rr = done;
    console.log(`# full reindex in a second process: exit ${rr.code} after ${((Date.now() - t0) / 1000).toFixed(1)} s, ${during} searches meanwhile`);
    let report = null;
    try {
      report = JSON.parse(rr.stdout);
    } catch {
      report = null;
    }
    check('a full reindex while the server holds the index succeeds', rr.code === 0 && report?.mode === 'full' && report?.notes === before.json?.notes,
      `exit ${rr.code} ${rr.signal ?? ''} ${rr.stdout.slice(0, 300)} ${rr.stderr.slice(-600)}`);
    check('every search during the rebuild returned notes', during > 0 && bad.length === 0, `${bad.length} of ${during} failed: ${bad[0] ?? ''}`);

    const after = await callTool(client, 'vault_search', { query: QUERY, k: 3 });
    check('vault_search after the rebuild returns the same top note', !after.isError && after.json?.notes?.[0]?.path === top, after.text.slice(0, 300));
    const ov = await callTool(client, 'vault_overview', {});
    console.log(`# after: ${ov.json?.notes} notes, ${ov.json?.chunks} chunks`);
    check('note and chunk counts after equal those before', !ov.isError && ov.json?.notes === before.json?.notes && ov.json?.chunks === before.json?.chunks,
      `before ${before.json?.notes}/${before.json?.chunks}, after ${ov.json?.notes}/${ov.json?.chunks}`);

    // 3. The server's own reindex after the outside one.
    const re = await callTool(client, 'vault_reindex', {});
    check('vault_reindex after the outside rebuild reports the same notes', !re.isError && re.json?.notes === before.json?.notes, re.text.slice(0, 300));
    check('stdout carried only protocol messages', protocolErrors === 0, `${protocolErrors} transport errors`);
  } finally {
    await client.close().catch(() => {});
    if (tally.failed > 0) process.stderr.write(logs.join('').slice(-4000));
  }
}

await finish('wine-e2e', tally, main, 900_000);
