// Measures what a client meets on a vault with no index yet: a stdio server is
// spawned on a fresh copy of a vault, and the client sends vault_search right
// after initialize. It prints how long initialize took, how long the search
// took, whether it answered or failed, how long it says it waited for the
// first index, how far the vectors were, and the time from initialize to the
// first resources/list page.
//
// Usage: node first-search.mjs VAULT [QUERY]   (from e2e/, after `make build`)

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const bin = process.env.VAULT_RAG_BIN ?? path.join(repo, 'bin', 'vault-rag');
const dataDir = path.resolve(process.env.VAULT_RAG_DATA ?? path.join(repo, 'data'));
const [src, query = 'how do I get started'] = process.argv.slice(2);
if (!src) {
  console.error('usage: node first-search.mjs VAULT [QUERY]');
  process.exit(2);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vault-rag-first-'));
const vault = path.join(tmp, 'vault');
fs.cpSync(src, vault, { recursive: true });
const env = { ...process.env, VAULT_PATH: vault, DB_PATH: path.join(tmp, 'index.db'), VAULT_RAG_DATA: dataDir };
const transport = new StdioClientTransport({ command: bin, args: ['serve', '--transport', 'stdio', '--watch=false'], env, stderr: 'ignore' });
const client = new Client({ name: 'first-search', version: '1' });
const t0 = performance.now();
try {
  await client.connect(transport);
  const tInit = performance.now();
  const res = await client.callTool({ name: 'vault_search', arguments: { query } }, undefined, { timeout: 600_000 });
  const tSearch = performance.now();
  const text = (res.content ?? []).map((c) => c.text ?? '').join('');
  const out = { initialize_ms: Math.round(tInit - t0), search_ms: Math.round(tSearch - tInit), error: res.isError ? text : null };
  if (!res.isError) {
    const j = res.structuredContent ?? JSON.parse(text);
    Object.assign(out, { notes: (j.notes ?? []).length, waited_for_first_index_ms: j.waited_for_first_index_ms ?? 0, vectors: j.vectors });
  }
  const tList0 = performance.now();
  const page = await client.listResources();
  out.resources_list_ms = Math.round(performance.now() - tList0);
  out.resources_first_page = page.resources.length;
  out.initialize_to_resources_list_ms = Math.round(performance.now() - tInit);
  console.log(JSON.stringify(out));
} finally {
  await client.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
