// Starts vault-rag from a client configuration entry, as an MCP client does,
// and checks that it answers from the demo vault. scripts/package-test.sh
// passes the entry `vault-rag connect cursor --json` printed when vault-rag
// itself was run through npx or uvx, so the test covers what connect writes:
//
//   1. spawn the entry's command and args with the entry's environment and
//      nothing else but HOME, the PATH a desktop application gets (unless
//      the entry sets its own) and the --env settings (the local registries);
//   2. an MCP session with the official TypeScript SDK: initialize,
//      tools/list, vault_reindex, vault_search by keyword and by meaning
//      (lib.mjs checkDemoSession);
//   3. the index went to the entry's data folder.
//
// Usage: node e2e/package-launch.mjs --entry FILE --name LABEL --home DIR [--env K=V]...
// The last line is "package-launch: N passed, M failed"; exit 1 on a failure.

import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { Tally, checkDemoSession, finish } from './lib.mjs';

const CALL_TIMEOUT_MS = 600_000; // the first vault_reindex embeds every note
const GUI_PATH = '/usr/bin:/bin:/usr/sbin:/sbin'; // a desktop application's PATH (connect's guiPath)

function parseArgs(argv) {
  const o = { env: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case '--entry': o.entry = next(); break;
      case '--name': o.name = next(); break;
      case '--home': o.home = next(); break;
      case '--env': {
        const kv = next();
        const at = kv.indexOf('=');
        if (at < 1) throw new Error(`--env ${kv}: want NAME=VALUE`);
        o.env[kv.slice(0, at)] = kv.slice(at + 1);
        break;
      }
      default: throw new Error(`unknown argument ${a}`);
    }
  }
  if (!o.entry || !o.name || !o.home) throw new Error('usage: package-launch.mjs --entry FILE --name LABEL --home DIR [--env K=V]...');
  return o;
}

const tally = new Tally();
const { check } = tally;

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const doc = JSON.parse(fs.readFileSync(o.entry, 'utf8'));
  const entry = doc.mcpServers?.['vault-rag'];
  if (!entry) throw new Error(`${o.entry} has no mcpServers.vault-rag entry`);
  check(`${o.name}: the entry's command is an absolute path`, path.isAbsolute(entry.command), entry.command);
  const env = { PATH: GUI_PATH, ...entry.env, HOME: o.home, ...o.env };
  console.log(`# ${o.name}: ${[entry.command, ...entry.args].join(' ')}`);
  console.log(`#   env: ${Object.keys(env).sort().map((k) => `${k}=${env[k]}`).join(' ')}`);
  const transport = new StdioClientTransport({ command: entry.command, args: entry.args, env, cwd: o.home, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'package-launch', version: '0' });
  const started = Date.now();
  await client.connect(transport, { timeout: 300_000 });
  console.log(`# ${o.name}: initialized in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  try {
    await checkDemoSession(client, (name, ok, detail) => check(`${o.name}: ${name}`, ok, detail),
      ['vault_search', 'vault_grep', 'vault_read'], CALL_TIMEOUT_MS);
  } finally {
    await client.close();
  }
  if (tally.failed > 0) console.log(`# server stderr:\n${stderr}`);
  const indexes = path.join(entry.env.VAULT_RAG_DATA, 'indexes');
  check(`${o.name}: the index is in the entry's data folder`, fs.existsSync(indexes) &&
    fs.readdirSync(indexes).some((f) => f.endsWith('.db')), indexes);
}

await finish('package-launch', tally, main, 20 * 60_000);
