// End-to-end test of `vault-rag serve` with a client nobody here wrote: the
// official MCP TypeScript SDK. Over stdio and over streamable HTTP it lists the
// tools, calls each one with valid arguments and checks the result's shape, and
// checks the refusals (path traversal, unknown parameters, a foreign Origin).
// It lists the notes as resources, reads one, lists the template and
// completes a path, and watches the progress, log and list_changed
// notifications of a vault_reindex after a note is added.
//
// It runs against a temporary copy of the demo vault and a temporary index, so
// the real vault and the demo's index are never touched. When the demo's index
// has an embedding cache (`make demo` leaves one), it seeds the temporary
// index's cache: the server's first build, of the copy, then embeds nothing.
// (The index itself cannot be copied: it records the vault it was built from,
// and the server refuses an index of another vault.)
//
// Usage: node mcp-e2e.mjs   (from e2e/, after `make build`; `make e2e` does both)
// The last line is "e2e: N passed, M failed"; the exit code is 1 on any failure.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { Tally, bin, callTool as callToolJSON, demoCopy, exited, finish, freePort, waitForHealth } from './lib.mjs';

const TOOLS = ['vault_delta', 'vault_grep', 'vault_list', 'vault_overview', 'vault_read', 'vault_reindex', 'vault_search'];
const FACETS = ['type', 'project', 'status', 'topics', 'folders'];
const CALL_TIMEOUT_MS = 300_000; // the first vault_reindex may wait for a full build

const tally = new Tally();
const { check } = tally;

const callTool = (client, name, args) => callToolJSON(client, name, args, CALL_TIMEOUT_MS);

// exercise runs every check over one connected client; label names the
// transport, vault is the folder the server serves (a temporary copy).
async function exercise(client, label, vault) {
  const c = (name, ok, detail) => check(`${label}: ${name}`, ok, detail);

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  c("tools/list names the server's tools", JSON.stringify(names) === JSON.stringify(TOOLS), JSON.stringify(names));
  c('every input schema is strict', tools.every((t) => t.inputSchema?.additionalProperties === false),
    tools.filter((t) => t.inputSchema?.additionalProperties !== false).map((t) => t.name).join(','));

  // vault_reindex first: it waits for a build that starts after the call, so
  // the index exists (and is current) for everything below.
  const re = await callTool(client, 'vault_reindex', {});
  c('vault_reindex returns a report', !re.isError && typeof re.json?.mode === 'string' && re.json.notes > 0 &&
    Number.isInteger(re.json.took_ms) && Number.isInteger(re.json.run), re.text.slice(0, 300));

  const s = await callTool(client, 'vault_search', { query: 'why did writes get slow in the middle of the night', k: 3 });
  const notes = s.json?.notes ?? [];
  c('vault_search returns ranked notes', !s.isError && notes.length >= 1 && notes.length <= 3 &&
    notes.every((n, i) => n.rank === i + 1 && typeof n.path === 'string' && typeof n.match?.ranks === 'object' &&
      Array.isArray(n.passages) && n.passages.length >= 1 && n.passages.every((p) => typeof p.text === 'string' && p.text.length > 0)),
    s.text.slice(0, 300));
  c('vault_search sends the typed answer as structuredContent and text for the model, not JSON',
    s.json !== null && !s.text.startsWith('{') && notes.every((n) => s.text.includes(n.path)), s.text.slice(0, 300));
  c('vault_search says nothing is degraded by leaving degraded out, and its stages only when explained', s.json?.degraded === undefined &&
    s.json?.stages === undefined, s.text.slice(0, 300));
  const ex = await callTool(client, 'vault_search', { query: 'why did writes get slow in the middle of the night', k: 3, explain: true });
  c('vault_search with explain reports its stages', Array.isArray(ex.json?.stages) && ex.json.stages.length > 0, ex.text.slice(0, 300));

  // The client's expansions: the schema says what to write, the search takes
  // them, and the served configuration's stages say they read them.
  const searchTool = tools.find((t) => t.name === 'vault_search');
  const props = searchTool?.inputSchema?.properties ?? {};
  // The language rule: the demo vault is English, and the instructions, the
  // search and its expansions all say so, never "the question's language".
  const rule = 'The notes are written in English: write keywords and hypothetical_answer in English, whatever the language of the question.';
  const instructions = client.getInstructions() ?? '';
  c('initialize points to vault_overview and leaves the language rule to vault_search', !instructions.includes('language') && instructions.includes('vault_overview'),
    instructions.slice(0, 400));
  c('vault_search and its expansions name the notes\' language', (searchTool?.description ?? '').includes(rule) &&
    ['keywords', 'hypothetical_answer'].every((k) => /in English, whatever the language of the question/.test(props[k]?.description ?? '') &&
      !/question's language/.test(props[k]?.description ?? '')), (searchTool?.description ?? '').slice(0, 300));
  c('vault_search describes its optional keywords (by example) and hypothetical_answer', [['keywords', /E\.g\. /], ['hypothetical_answer', /sentences/]].every(([k, re]) =>
    props[k]?.type === 'string' && re.test(props[k]?.description ?? '') &&
    !(searchTool.inputSchema.required ?? []).includes(k)), JSON.stringify(props.keywords ?? {}).slice(0, 200));
  const x = await callTool(client, 'vault_search', {
    query: 'why did writes get slow in the middle of the night', k: 3,
    keywords: 'compaction stall write stall memtable flush L0 latency',
    hypothetical_answer: 'Writes got slow at night because compaction fell behind: L0 files piled up and the memtable flush stalled writes.',
    explain: true,
  });
  c('vault_search takes the client\'s keywords and answer', !x.isError && (x.json?.notes ?? []).length >= 1 &&
    (x.json?.stages ?? []).some((st) => /the client's keywords and answer read as sent/.test(st.info ?? '')), x.text.slice(0, 400));
  const tooLong = await callTool(client, 'vault_search', { query: 'x', hypothetical_answer: 'a'.repeat(20000) });
  c('an over-long hypothetical_answer is refused', tooLong.isError && /answer|hypothetical_answer/.test(tooLong.text), tooLong.text.slice(0, 200));

  const scoped = await callTool(client, 'vault_search', { query: 'what went wrong overnight', path: 'personal/' });
  c('a scoped vault_search reports the escalation outcome', !scoped.isError &&
    /^(filled|drained|ladder-end):/.test(scoped.json?.scope?.outcome ?? '') &&
    (scoped.json?.notes ?? []).every((n) => n.path.startsWith('personal/')), scoped.text.slice(0, 300));

  const top = notes[0]?.path ?? 'knowledge/engineering/idempotency.md';
  const r = await callTool(client, 'vault_read', { path: top });
  c('vault_read returns the note', !r.isError && r.json?.path === top && r.json.content.length > 0 && Array.isArray(r.json.headings) &&
    r.json.offset === 0 && Number.isInteger(r.json.total_bytes) && (r.json.next_offset === undefined || r.json.next_offset > 0),
    r.text.slice(0, 300));
  // An outline entry ("## Heading") read back as section, in another case.
  const heading = r.json?.headings?.find((h) => h.startsWith('## '));
  if (heading) {
    const sec = await callTool(client, 'vault_read', { path: top, section: heading.toUpperCase() });
    c('vault_read returns one section', !sec.isError && sec.json?.section?.endsWith(heading.replace(/^#+ /, '')) && sec.json.content.startsWith('## '),
      sec.text.slice(0, 300));
  }

  const l = await callTool(client, 'vault_list', { limit: 5 });
  c('vault_list pages through notes', !l.isError && l.json?.notes?.length === Math.min(5, l.json?.total ?? 0) &&
    l.json.total === re.json?.notes && (l.json.total > 5 ? l.json.next_offset === 5 : l.json.next_offset === undefined),
    l.text.slice(0, 300));

  const g = await callTool(client, 'vault_grep', { pattern: 'SOURDOUGH', limit: 3 });
  const gn = g.json?.results ?? [];
  c('vault_grep lists matching lines by note, with counts of all of them', !g.isError && g.json.complete === true &&
    g.json.matches >= gn.reduce((n, x) => n + x.lines.length, 0) && g.json.notes >= gn.length && gn.length > 0 &&
    gn.some((x) => x.path === 'personal/baking/sourdough-starter.md') &&
    gn.every((x) => x.lines.every((ln) => Number.isInteger(ln.line) && ln.line > 0 && /sourdough/i.test(ln.text))),
    g.text.slice(0, 400));
  const gf = await callTool(client, 'vault_grep', { pattern: 'sourdough', files_only: true, sort: 'date' });
  c('vault_grep files_only lists notes with their dates', !gf.isError && gf.json?.results?.length === gf.json?.notes &&
    gf.json.results.every((x) => x.lines === undefined && /^\d{4}-\d{2}-\d{2}$/.test(x.date)), gf.text.slice(0, 300));
  const ge = await callTool(client, 'vault_grep', { pattern: 'a*', regex: true });
  c('vault_grep refuses a pattern matching the empty string', ge.isError && /empty string/.test(ge.text), ge.text.slice(0, 200));

  const o = await callTool(client, 'vault_overview', {});
  const facetOK = (f) => f && Array.isArray(f.values) && Number.isInteger(f.more) && Number.isInteger(f.without) &&
    f.values.every((v) => typeof v.value === 'string' && Number.isInteger(v.notes) && v.notes > 0);
  c('vault_overview returns the counts, the language, the dates and every facet', !o.isError && o.json?.notes === re.json?.notes &&
    o.json.chunks > 0 && o.json.language?.rule === rule && o.json.language.languages?.[0]?.name === 'English' &&
    /^\d{4}-\d{2}-\d{2}$/.test(o.json.dates?.from ?? '') && o.json.dates.to >= o.json.dates.from &&
    FACETS.every((f) => facetOK(o.json.facets?.[f])) && o.json.facets.folders.values.every((v) => v.value.endsWith('/')),
    o.text.slice(0, 400));
  const topType = o.json?.facets?.type?.values?.[0];
  if (topType) {
    const byType = await callTool(client, 'vault_list', { type: topType.value.toUpperCase(), limit: 1 });
    c('an overview value filters vault_list (case-insensitively)', !byType.isError && byType.json?.total === topType.notes, byType.text.slice(0, 300));
  }
  const o2 = await callTool(client, 'vault_overview', { facets: ['topics'], limit: 2 });
  c('vault_overview returns the facets asked for, bounded by limit', !o2.isError && Object.keys(o2.json?.facets ?? {}).join() === 'topics' &&
    o2.json.facets.topics.values.length <= 2 && o2.json.limit === 2, o2.text.slice(0, 300));
  const o3 = await callTool(client, 'vault_overview', { facets: ['tags'] });
  c('vault_overview refuses an unknown facet, naming the known ones', o3.isError && o3.text.includes('"tags"') &&
    FACETS.every((f) => o3.text.includes(f)), o3.text);

  const d = await callTool(client, 'vault_delta', {
    items: [
      { title: 'Idempotency', text: 'An operation is idempotent if doing it twice has the same effect as doing it once.' },
      { text: 'Идемпотентность означает, что повторный вызов не меняет результат.' },
    ],
  });
  const [known, cyr] = d.json?.items ?? [];
  c('vault_delta scores an item with evidence', !d.isError && ['covered', 'new'].includes(known?.status) &&
    typeof known?.similarity === 'number' && typeof known?.path === 'string' && d.json.threshold === 0.745, d.text.slice(0, 300));
  c('vault_delta never scores Cyrillic', cyr?.status === 'unscored: language' && cyr.similarity === undefined, JSON.stringify(cyr));

  await resources(client, c, re.json?.notes, top, r.json);
  await progress(client, c, label, vault);

  const trav = await callTool(client, 'vault_read', { path: '../etc/passwd' });
  c('vault_read refuses ../etc/passwd', trav.isError && trav.text.includes('..') && !trav.text.includes('root:'), trav.text);
  const enc = await callTool(client, 'vault_read', { path: '%2e%2e%2fetc%2fpasswd' });
  c('vault_read refuses encoded traversal', enc.isError && enc.text.includes('URL-decoded'), enc.text);
  const unk = await callTool(client, 'vault_search', { query: 'x', bogus: 1 });
  c('an unknown parameter is an error naming it', unk.isError && unk.text.includes('"bogus"'), unk.text);
}

// uriOf is a note's resource URI: vault:// and the path, each segment
// percent-encoded.
const uriOf = (p) => 'vault://' + p.split('/').map(encodeURIComponent).join('/');
// pathOf is the path a vault:// URI names (the server may encode a few more
// characters than encodeURIComponent does, as RFC 3986 allows).
const pathOf = (uri) => (uri.startsWith('vault://') ? decodeURIComponent(uri.slice('vault://'.length)) : null);

// resources checks the notes as resources: the capabilities, every page of
// resources/list, resources/read against vault_read, the template, and
// completion of its path.
async function resources(client, c, notes, top, read0) {
  const caps = client.getServerCapabilities() ?? {};
  c('initialize declares resources (listChanged), logging and completions',
    caps.resources?.listChanged === true && caps.logging !== undefined && caps.completions !== undefined, JSON.stringify(caps));
  const listed = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.listResources(cursor ? { cursor } : {});
    listed.push(...page.resources);
    cursor = page.nextCursor;
    pages++;
  } while (cursor && pages < 1000);
  c('resources/list pages through every note', listed.length === notes && new Set(listed.map((x) => x.uri)).size === notes,
    `${listed.length} resources in ${pages} pages, ${notes} notes`);
  c('each resource is vault://PATH, text/markdown, named by its title', listed.length > 0 && listed.every((x) =>
    pathOf(x.uri) === x.description && /^vault:\/\/[A-Za-z0-9%/._~!$&'()*+,;=:@-]*$/.test(x.uri) && x.mimeType === 'text/markdown' && typeof x.name === 'string' && x.name.length > 0),
  JSON.stringify(listed.slice(0, 2)));
  const read = await client.readResource({ uri: uriOf(top) });
  const body = read.contents?.[0];
  // The resource is the whole note; vault_read's first page is its start
  // (the demo vault has no embeds), and all of it when there is one page.
  const content = read0?.content ?? '';
  const whole = read0?.next_offset === undefined ? body?.text === content : body?.text?.startsWith(content);
  c('resources/read returns the note as vault_read does', content.length > 0 && whole && body?.mimeType === 'text/markdown' &&
    pathOf(body?.uri ?? '') === top && typeof body?._meta?.title === 'string', JSON.stringify(body ?? {}).slice(0, 300));
  let refused = '';
  try {
    await client.readResource({ uri: 'vault://..%2Fetc%2Fpasswd' });
  } catch (err) {
    refused = String(err?.message ?? err);
  }
  c('resources/read refuses a traversal as vault_read does', refused.includes('..') && !refused.includes('root:'), refused);
  const { resourceTemplates } = await client.listResourceTemplates();
  c('resources/templates/list gives vault://{path}', resourceTemplates?.length === 1 && resourceTemplates[0].uriTemplate === 'vault://{path}' &&
    resourceTemplates[0].mimeType === 'text/markdown', JSON.stringify(resourceTemplates));
  const prefix = top.slice(0, top.indexOf('/') + 1);
  const done = await client.complete({ ref: { type: 'ref/resource', uri: 'vault://{path}' }, argument: { name: 'path', value: prefix } });
  const values = done.completion?.values ?? [];
  c('completion/complete offers the paths starting with what was typed', values.length > 0 && values.length <= 100 &&
    values.includes(top) && values.every((v) => v.startsWith(prefix)) && done.completion.total >= values.length,
  JSON.stringify(done.completion).slice(0, 300));
}

// progress adds a note to the vault and calls vault_reindex with a progress
// handler: the run's progress ends at its total. Over stdio, the build's log
// messages (at level info) and list_changed arrive too.
async function progress(client, c, label, vault) {
  const messages = [];
  let changed = 0;
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { messages.push(n.params); });
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => { changed++; });
  await client.setLoggingLevel('info');
  let body = `# Added by the e2e run over ${label}\n\n`;
  for (let i = 0; i < 20; i++) body += `## Part ${i}\n\nPart ${i} of a note added while the server runs, long enough to be a chunk.\n\n`;
  fs.writeFileSync(path.join(vault, `e2e-added-${label}.md`), body);
  const seen = [];
  const res = await client.callTool({ name: 'vault_reindex', arguments: {} }, undefined,
    { timeout: CALL_TIMEOUT_MS, onprogress: (p) => seen.push(p) });
  const last = seen[seen.length - 1];
  c('vault_reindex of a changed vault sends progress, increasing, ending at its total', !res.isError && seen.length >= 1 &&
    seen.every((p, i) => i === 0 || p.progress > seen[i - 1].progress) && last.progress === last.total &&
    /^reindex done/.test(last.message ?? ''), JSON.stringify(seen).slice(0, 400));
  const listed = await client.listResources({});
  let all = listed.resources;
  for (let cur = listed.nextCursor; cur;) {
    const page = await client.listResources({ cursor: cur });
    all = all.concat(page.resources);
    cur = page.nextCursor;
  }
  c('the added note is a resource', all.some((x) => pathOf(x.uri) === `e2e-added-${label}.md`), `${all.length} resources`);
  if (label === 'stdio') {
    // Notifications and the result come over one stream, in order of sending.
    c('the build is logged at info, start and end', messages.some((m) => m.level === 'info' && /reindex run \d+ started/.test(m.data)) &&
      messages.some((m) => m.level === 'info' && /reindex run \d+ done/.test(m.data)), JSON.stringify(messages).slice(0, 400));
    c('a note added sends resources/list_changed', changed >= 1, `${changed} list_changed`);
  }
}


async function main() {
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: run \`make build\``);
  const { tmp, vault, env } = demoCopy('vault-rag-e2e-');
  env.VAULT_RAG_TOOLS = 'all'; // every tool is exercised; inspector-e2e.mjs checks the default set
  const logs = [];
  try {
    // 1. stdio: the SDK spawns the server and speaks over its stdin/stdout.
    const stdio = new StdioClientTransport({
      command: bin, args: ['serve', '--transport', 'stdio'], env, cwd: tmp, stderr: 'pipe',
    });
    stdio.stderr?.on('data', (b) => logs.push(`[stdio] ${b}`));
    let protocolErrors = 0;
    stdio.onerror = () => { protocolErrors++; };
    const c1 = new Client({ name: 'vault-rag-e2e', version: '1.0.0' });
    await c1.connect(stdio);
    check('stdio: connects and initializes', c1.getServerVersion()?.name === 'vault-rag', JSON.stringify(c1.getServerVersion()));
    await exercise(c1, 'stdio', vault);
    await c1.close();
    check('stdio: stdout carried only protocol messages', protocolErrors === 0, `${protocolErrors} transport errors`);

    // 2. streamable HTTP: a daemon on a free loopback port.
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const daemon = spawn(bin, ['serve', '--addr', `127.0.0.1:${port}`], { env, cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] });
    daemon.stdout.on('data', (b) => logs.push(`[http stdout] ${b}`));
    daemon.stderr.on('data', (b) => logs.push(`[http] ${b}`));
    try {
      const health = await waitForHealth(`${base}/health`, daemon, 60_000);
      // status: error when the index cannot be read (it may still be building here), else
      // degraded exactly when something of the served configuration cannot run.
      check('http: /health answers', ['ok', 'degraded', 'error'].includes(health.status) && Array.isArray(health.models) &&
        Array.isArray(health.degraded_stages) && Array.isArray(health.other_configurations) &&
        (health.status === 'error') === (health.index !== 'ok') &&
        (health.status === 'error' || (health.status === 'degraded') === (health.degraded_stages.length > 0)) &&
        !health.models.some((m) => m.stand_in_for && m.role === 'cross-encoder'),
        JSON.stringify(health).slice(0, 300));
      const c2 = new Client({ name: 'vault-rag-e2e', version: '1.0.0' });
      await c2.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
      check('http: connects and initializes', c2.getServerVersion()?.name === 'vault-rag', JSON.stringify(c2.getServerVersion()));
      await exercise(c2, 'http', vault);
      await c2.close();
      const after = await (await fetch(`${base}/health`)).json();
      check('http: /health shows the index and its age', after.notes > 0 && after.chunks > 0 && Number.isInteger(after.index_age_seconds) &&
        after.models.some((m) => m.role === 'embedder' && m.loaded), JSON.stringify(after).slice(0, 300));
      const foreign = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { Origin: 'https://evil.example', 'Content-Type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      });
      check('http: a foreign Origin is refused with 403', foreign.status === 403, `status ${foreign.status}`);
    } finally {
      daemon.kill('SIGTERM');
      const { code, signal } = await exited(daemon);
      check('http: SIGTERM shuts the daemon down cleanly', code === 0, `code ${code} signal ${signal}`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (tally.failed > 0) process.stderr.write(logs.join(''));
  }
}

await finish('e2e', tally, main, 600_000);
