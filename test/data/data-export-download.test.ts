import yauzl from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

// A person's download of their own data (docs/export.md, "Downloading your own data"): asked for
// with requestDataExport, made in the background, offered at its download URL to that person
// only, and not again within the hour.

const REQUEST =
  'mutation { requestDataExport { id state requestedAt readyAt expiresAt sizeBytes downloadUrl error } }';
const LIST = '{ myDataExports { id state readyAt expiresAt sizeBytes downloadUrl } }';

/** The entries of a ZIP archive and the text of one of them. */
async function unzip(bytes: Buffer, want: RegExp): Promise<{ names: string[]; text: string }> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const names: string[] = [];
      let text = '';
      zip.on('entry', (entry: yauzl.Entry) => {
        names.push(entry.fileName);
        if (!want.test(entry.fileName)) return zip.readEntry();
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e);
          stream.on('data', (d: Buffer) => (text += d.toString('utf8')));
          stream.on('end', () => zip.readEntry());
        });
      });
      zip.on('end', () => resolve({ names, text }));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

describe('downloading your own data', () => {
  let t: TestApp;
  let alice: Agent;
  let bob: Agent;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await signUpAndIn(t);
    bob = await signUpAndIn(t);
    const ws = await t.gql(
      'mutation { createWorkspace(input: { name: "Mine" }) { channels { id } } }',
      {},
      alice,
    );
    const channel = ws.body.data!.createWorkspace.channels[0].id;
    await t.gql(
      'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
      { i: { conversationId: channel, text: 'my own words' } },
      alice,
    );
  });
  afterAll(async () => t?.close());

  it('is made in the background and offered to its owner only', async () => {
    const asked = await t.gql(REQUEST, {}, alice);
    expect(asked.body.errors).toBeUndefined();
    expect(asked.body.data!.requestDataExport).toMatchObject({ state: 'PREPARING', downloadUrl: null });
    // Asking again while it is prepared answers the same export.
    const again = await t.gql(REQUEST, {}, alice);
    expect(again.body.data!.requestDataExport.id).toBe(asked.body.data!.requestDataExport.id);

    let ready: any = null;
    for (let i = 0; i < 200 && !ready; i++) {
      const list = await t.gql(LIST, {}, alice);
      ready = list.body.data!.myDataExports.find((e: any) => e.state === 'READY') ?? null;
      if (!ready) await new Promise((r) => setTimeout(r, 50));
    }
    expect(ready).toMatchObject({ downloadUrl: expect.stringMatching(/^\/api\/data-exports\//) });
    expect(Date.parse(ready.expiresAt) - Date.parse(ready.readyAt)).toBe(7 * 24 * 3600_000);

    const res = await t.inject({ method: 'GET', url: ready.downloadUrl, headers: agentHeaders(alice) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toMatch(/attachment; filename="svc-data-/);
    expect(res.rawPayload.length).toBe(ready.sizeBytes);
    const { names, text } = await unzip(res.rawPayload, /messages\.jsonl$/);
    expect(names.some((n) => n.endsWith('/manifest.json'))).toBe(true);
    expect(names.some((n) => n.endsWith('/account.jsonl'))).toBe(true);
    expect(JSON.parse(text.trim())).toMatchObject({ text: 'my own words', authorId: alice.id });

    // Not to anyone else, and not without a session.
    const other = await t.inject({ method: 'GET', url: ready.downloadUrl, headers: agentHeaders(bob) });
    expect(other.statusCode).toBe(404);
    const anonymous = await t.inject({ method: 'GET', url: ready.downloadUrl });
    expect(anonymous.statusCode).toBe(401);
    expect((await t.gql(LIST, {}, bob)).body.data!.myDataExports).toEqual([]);
    const bad = await t.inject({
      method: 'GET',
      url: '/api/data-exports/..%2F..%2Fsvc.sqlite/download',
      headers: agentHeaders(alice),
    });
    expect(bad.statusCode).toBe(404);
  });

  it('is refused again within the hour, saying when', async () => {
    const res = await t.gql(REQUEST, {}, alice);
    expect(res.body.errors![0]!.extensions!.code).toBe('RATE_LIMITED');
    expect(res.body.errors![0]!.extensions!.retryAfterSeconds).toBeGreaterThan(3000);
    expect(res.body.errors![0]!.message).toMatch(/less than an hour ago/);
    const anonymous = await t.gql(LIST, {});
    expect(anonymous.body.errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
  });
});
