/// <reference lib="dom" />
// What the two-server browser tests share (remote-spaces, remote-people): a server that
// federates over plain HTTP on loopback, a picture to upload, a name made safe for a RegExp, an
// account's id read from a server's database, and a GraphQL request made from a page.
import path from 'node:path';

import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import sharp from 'sharp';

import { TestServer } from './harness.js';

/** A server on `port` that federates with others on loopback, signups open and cheap. */
export function federating(port: number, env: Record<string, string> = {}): Promise<TestServer> {
  return TestServer.start(
    {
      ...env,
      SVC_OPEN_REGISTRATION: 'true',
      SVC_REGISTRATION_POW_BITS: '10',
      SVC_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      SVC_S2S_INSECURE: 'true',
      SVC_S2S_TIMEOUT_MS: '3000',
    },
    port,
  );
}

/** A PNG of one colour. */
export function square(colour: string, size = 64): Promise<Buffer> {
  return sharp({ create: { width: size, height: size, channels: 3, background: colour } })
    .png()
    .toBuffer();
}

/** `s` matched literally inside a RegExp (a host's `127.0.0.1:port`). */
export const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The id of an account of a test server, read from its database file. */
export function accountIdAt(server: TestServer, username: string): string {
  const db = new Database(path.join(server.dataDir, 'svc.sqlite'), { readonly: true });
  try {
    const row = db.prepare('select id from account where username = ?').get(username) as
      { id: string } | undefined;
    if (!row) throw new Error(`no account ${username}`);
    return row.id;
  } finally {
    db.close();
  }
}

/** One GraphQL request from a page, with its session: the answer's body. */
export async function apiAt(page: Page, query: string, variables: object): Promise<any> {
  return page.evaluate(
    async ([q, v]) => {
      const csrf = /(?:^|;\s*)svc_csrf=([^;]*)/.exec(document.cookie)?.[1] ?? '';
      const res = await fetch('/api', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': decodeURIComponent(csrf) },
        body: JSON.stringify({ query: q, variables: v }),
      });
      return res.json();
    },
    [query, variables] as const,
  );
}
