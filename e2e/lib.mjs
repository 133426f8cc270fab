// Helpers the end-to-end scripts share: where the checkout, the binary and
// the data folder are, a temporary copy of the demo vault to serve, a tally of
// checks printed as TAP-like lines, a tool call that parses its JSON answer, a
// free loopback port, a wait for a server's /health and one for a child's
// exit, and the end of a run.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// repo is the checkout these scripts are in; bin the vault-rag they test
// ($VAULT_RAG_BIN, else the checkout's build); dataDir the data folder
// ($VAULT_RAG_DATA, else the checkout's).
export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const bin = process.env.VAULT_RAG_BIN ?? path.join(repo, 'bin', 'vault-rag');
export const dataDir = path.resolve(process.env.VAULT_RAG_DATA ?? path.join(repo, 'data'));

// demoIndexCache is the embedding cache beside the demo vault's own index,
// as `vault-rag status` names that index; null when status cannot say.
export function demoIndexCache() {
  const r = spawnSync(bin, ['status', '--json', '--vault', path.join(repo, 'vault')], {
    env: { ...process.env, VAULT_RAG_DATA: dataDir, DB_PATH: '' }, encoding: 'utf8', timeout: 60_000,
  });
  if (r.status !== 0) return null;
  try {
    return JSON.parse(r.stdout).index + '.embeddings';
  } catch {
    return null;
  }
}

// demoCopy makes a temporary folder (its name starting with prefix) holding a
// copy of the demo vault, so the real vault and the demo's index are never
// touched, and the path of an index of that copy, whose embedding cache is
// seeded from the demo index's when there is one. It returns {tmp, vault, db,
// env}: env is the environment of a server over them, with the shipping
// configuration unless $VAULT_RAG_CONFIG names another, and without the
// caller's token, transport or address.
export function demoCopy(prefix) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const vault = path.join(tmp, 'vault');
  const db = path.join(tmp, 'vault.db');
  fs.cpSync(path.join(repo, 'vault'), vault, { recursive: true, verbatimSymlinks: true });
  const seed = demoIndexCache();
  if (seed && fs.existsSync(seed)) fs.copyFileSync(seed, db + '.embeddings');
  const env = {
    ...process.env,
    VAULT_PATH: vault,
    DB_PATH: db,
    VAULT_RAG_DATA: dataDir,
    VAULT_RAG_ROOT: repo,
    VAULT_RAG_CONFIG: process.env.VAULT_RAG_CONFIG ?? 'shipping',
  };
  delete env.VAULT_RAG_TOKEN;
  delete env.VAULT_RAG_TRANSPORT;
  delete env.VAULT_RAG_ADDR;
  return { tmp, vault, db, env };
}

// Tally counts checks: `ok - NAME` or `not ok - NAME: DETAIL`, one a line.
export class Tally {
  passed = 0;
  failed = 0;

  check = (name, ok, detail = '') => {
    if (ok) {
      this.passed++;
      console.log(`ok - ${name}`);
    } else {
      this.failed++;
      console.log(`not ok - ${name}${detail ? `: ${detail}` : ''}`);
    }
  };
}

// callTool returns {json, text, isError}: json is the typed answer
// (structuredContent), or the text parsed as JSON for a tool that sends none,
// or null; text is what the model reads.
export async function callTool(client, name, args, timeout) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout });
  const text = (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
  let json = null;
  if (!res.isError && res.structuredContent) {
    json = res.structuredContent;
  } else if (!res.isError) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  return { json, text, isError: res.isError === true };
}

// freePort is a loopback port nothing listens on at the moment.
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// waitForHealth polls url until it answers 200 (its JSON), the child exits,
// or deadlineMs passes.
export async function waitForHealth(url, child, deadlineMs) {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.ok) return res.json();
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error(`no answer from ${url}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// exited resolves with a child's {code, signal} once it has exited; when
// killAfterMs is given, it kills the child if it has not exited by then.
export function exited(child, killAfterMs) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    const t = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.once('exit', (code, signal) => {
      clearTimeout(t);
      resolve({ code, signal });
    });
  });
}

// finish runs main, the checks of the run called name, and ends the process:
// a throw counts as a failed check, a run longer than limitMs stops as a
// failure, the last line is "NAME: N passed, M failed" and the exit status is
// 1 on any failure.
export async function finish(name, tally, main, limitMs) {
  const guard = setTimeout(() => {
    console.log(`not ok - the ${name} run took more than ${limitMs / 60_000} minutes`);
    console.log(`${name}: ${tally.passed} passed, ${tally.failed + 1} failed`);
    process.exit(1);
  }, limitMs);
  guard.unref();
  try {
    await main();
  } catch (err) {
    tally.check('the run completes', false, err?.stack ?? String(err));
  }
  console.log(`${name}: ${tally.passed} passed, ${tally.failed} failed`);
  process.exit(tally.failed > 0 ? 1 : 0);
}

// checkDemoSession runs the checks of an MCP session with a server started
// on a copy of the demo vault, as a client would after connecting: the
// server's name, tools/list (at least wantTools), vault_reindex (the first
// build), a keyword search that must find the note defining lease_ttl_ms and
// a search by meaning that must answer without degrading. timeout is each
// call's (the first reindex embeds every note).
export async function checkDemoSession(client, check, wantTools, timeout) {
  const info = client.getServerVersion();
  check('initialize names the server', info?.name === 'vault-rag', JSON.stringify(info));
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  const missing = wantTools.filter((t) => !names.includes(t));
  check('tools/list lists the tools', missing.length === 0, `missing ${missing.join(', ')} from ${names.join(', ')}`);
  if (names.includes('vault_reindex')) {
    const re = await callTool(client, 'vault_reindex', {}, timeout);
    check('vault_reindex builds the index of the demo vault', !re.isError && re.json?.notes > 0, re.text.slice(0, 400));
  } else {
    // The default tool set has no vault_reindex: the server builds the
    // first index by itself, and a search says how far its vectors are.
    const deadline = Date.now() + timeout;
    let w;
    do {
      w = await callTool(client, 'vault_search', { query: 'lease_ttl_ms', k: 1 }, timeout);
      if (!w.isError && w.json && w.json.vectors === undefined) break;
      await new Promise((r) => setTimeout(r, 2000));
    } while (Date.now() < deadline);
    check('the server builds the demo vault\'s first index by itself', !w.isError && w.json?.vectors === undefined, w.text.slice(0, 400));
  }
  const s = await callTool(client, 'vault_search', { query: 'lease_ttl_ms', k: 5 }, timeout);
  const paths = (s.json?.notes ?? []).map((n) => n.path);
  check('vault_search lease_ttl_ms finds the demo note that defines it', paths.includes('reference/ferrite-config-keys.md'),
    s.isError ? s.text.slice(0, 400) : paths.join(', '));
  const v = await callTool(client, 'vault_search', { query: 'why did writes get slow in the middle of the night', k: 3 }, timeout);
  check('vault_search with embeddings answers', !v.isError && (v.json?.notes?.length ?? 0) > 0 &&
    (v.json?.degraded ?? []).length === 0, v.text.slice(0, 400));
}
