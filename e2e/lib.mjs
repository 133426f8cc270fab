// Helpers the end-to-end scripts share: a tally of checks printed as TAP-like
// lines, a tool call that parses its JSON answer, a free loopback port, and a
// wait for a server's /health.

import net from 'node:net';

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

// callTool returns {json, text, isError}; json is the parsed text or null.
export async function callTool(client, name, args, timeout) {
  const res = await client.callTool({ name, arguments: args }, undefined, { timeout });
  const text = (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
  let json = null;
  if (!res.isError) {
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
