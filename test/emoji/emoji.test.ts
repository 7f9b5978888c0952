import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import {
  agentHeaders,
  createTestApp,
  createTestDatabase,
  type Agent,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { signIn, signUpAndIn } from '../_util/seed.js';
import {
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  send,
  setRole,
} from '../conversations/_helpers.js';
import { makeAnimatedGif, makeImage } from '../files/_image-upload.js';

const LIST = `query($s: ID!) { customEmojis(serverId: $s) { id serverId name shortcode url contentType
  width height createdById createdAt } }`;
const CREATE = `mutation($i: CreateCustomEmojiInput!) { createCustomEmoji(input: $i) { id name shortcode
  url contentType width height createdById } }`;
const DELETE = 'mutation($s: ID!, $n: String!) { deleteCustomEmoji(serverId: $s, name: $n) }';
const REACT = `mutation($m: ID!, $e: String!) { addReaction(messageId: $m, emoji: $e) {
  reactions { emoji count } } }`;
const UNREACT = `mutation($m: ID!, $e: String!) { removeReaction(messageId: $m, emoji: $e) {
  reactions { emoji count } } }`;
const CHANNELS = 'query($s: ID!) { channels(serverId: $s) { id name } }';

const clock = new ManualClock();
let database: TestDatabase;
let t: TestApp;
// owner, moderator, member, guest; outsider in another workspace
let olga: Agent, mona: Agent, mike: Agent, gus: Agent, otto: Agent;
let serverId: string, general: string, otherServer: string, otherGeneral: string;
let png: Buffer;

const b64 = (b: Buffer) => b.toString('base64');
const create = (agent: Agent, input: Record<string, unknown>) =>
  t.gql(CREATE, { i: { serverId, contentType: 'image/png', image: b64(png), ...input } }, agent);
const list = (agent: Agent, s = serverId) => t.gql(LIST, { s }, agent);
const get = (url: string, agent: Agent) =>
  t.inject({ method: 'GET', url, headers: agentHeaders(agent) });

async function generalOf(agent: Agent, s: string): Promise<string> {
  const channels = ok(await t.gql(CHANNELS, { s }, agent)).channels as Array<{
    id: string;
    name: string;
  }>;
  return channels.find((c) => c.name === 'general')!.id;
}

beforeAll(async () => {
  database = await createTestDatabase();
  t = await createTestApp({ clock, database });
  [olga, mona, mike, gus, otto] = await Promise.all(
    ['olga', 'mona', 'mike', 'gus', 'otto'].map((u) => signUpAndIn(t, { username: `${u}emo` })),
  );
  serverId = (await createWorkspace(t, olga, 'Emoji')).id;
  await inviteAndJoin(t, olga, serverId, [mona, mike]);
  ok(await setRole(t, olga, serverId, mona.id, 'MODERATOR'));
  general = await generalOf(olga, serverId);
  await inviteAndJoin(t, olga, serverId, [gus], { role: 'GUEST', channelIds: [general] });
  otherServer = (await createWorkspace(t, otto, 'Elsewhere')).id;
  otherGeneral = await generalOf(otto, otherServer);
  png = await makeImage('png', { width: 300, height: 150, exif: 'emoji-secret' });
});
afterAll(async () => {
  await t?.close();
  await database.drop();
});

describe('custom emoji', () => {
  it('are added by Moderators and up, re-encoded, and listed for every member', async () => {
    const made = ok(await create(olga, { name: 'PartyParrot' })).createCustomEmoji;
    expect(made).toMatchObject({
      name: 'partyparrot',
      shortcode: ':partyparrot:',
      contentType: 'image/png',
      width: 128,
      height: 64,
      createdById: olga.id,
    });
    expect(made.url).toMatch(/^\/api\/files\/avatars\/[0-9a-f]{64}\.png$/);
    const gif = await makeAnimatedGif(3);
    const anim = ok(
      await create(mona, { name: ':dance:', contentType: 'image/gif', image: b64(gif) }),
    ).createCustomEmoji;
    expect(anim.name).toBe('dance');

    expectCode(await create(mike, { name: 'memberone' }), 'FORBIDDEN');
    expectCode(await create(gus, { name: 'guestone' }), 'FORBIDDEN');
    expectCode(await create(otto, { name: 'outsider' }), 'NOT_FOUND');

    for (const who of [olga, mike, gus]) {
      const names = (ok(await list(who)).customEmojis as Array<{ name: string }>).map(
        (e) => e.name,
      );
      // Oldest first (by creation), as `customEmojis` pages them.
      expect(names).toEqual(['partyparrot', 'dance']);
    }
    expectCode(await list(otto), 'NOT_FOUND');

    // Any signed-in user reads the image; only pixels come back, animation kept.
    const image = await get(made.url, otto);
    expect(image.statusCode).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.rawPayload.includes('emoji-secret')).toBe(false);
    const animated = await get(anim.url, mike);
    expect((await sharp(animated.rawPayload, { animated: true }).metadata()).pages).toBe(3);
  });

  it('refuse bad names, taken names and bad images with clear messages', async () => {
    for (const name of ['a', 'x'.repeat(33), 'has space', 'émoji', 'semi;colon', '::', '']) {
      const err = expectCode(await create(olga, { name }), 'VALIDATION');
      expect(err.message).toMatch(/2 to 32/);
    }
    expect(expectCode(await create(olga, { name: 'PARTYPARROT' }), 'CONFLICT').message).toMatch(
      /already has an emoji named :partyparrot:/,
    );
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>1</script></svg>');
    const over = Buffer.alloc(256 * 1024 + 1, 1);
    png.copy(over);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ image: b64(over) }, /larger than 262144 bytes/],
      [{ image: '' }, /empty/],
      [{ image: 'not base64!' }, /base64/],
      [{ image: b64(svg), contentType: 'image/svg+xml' }, /PNG, JPEG, GIF or WebP/],
      [{ image: b64(svg) }, /could not be read/],
      [{ contentType: 'image/jpeg' }, /png, not image\/jpeg/],
      [{ image: b64(png.subarray(0, 50)) }, /could not be/],
      [{ contentType: 'text/plain' }, /PNG, JPEG/],
    ];
    for (const [input, message] of cases) {
      const err = expectCode(await create(olga, { name: 'bad', ...input }), 'VALIDATION');
      expect(err.message).toMatch(message);
    }
    const atLimit = await makeImage('png', { width: 16, height: 16 });
    ok(await create(olga, { name: 'small', image: b64(atLimit) }));
    ok(await t.gql(DELETE, { s: serverId, n: 'small' }, olga));
  });

  it('work as :name: reactions of their workspace and stay as text once deleted', async () => {
    const msg = await send(t, mike, general, 'look :partyparrot: :nosuch:');
    expect(msg.text).toBe('look :partyparrot: :nosuch:');
    const reacted = ok(await t.gql(REACT, { m: msg.id, e: ':PartyParrot:' }, gus)).addReaction;
    expect(reacted.reactions).toEqual([{ emoji: ':partyparrot:', count: 1 }]);
    ok(await t.gql(REACT, { m: msg.id, e: ':dance:' }, mike));
    expect(
      expectCode(await t.gql(REACT, { m: msg.id, e: ':nosuch:' }, mike), 'VALIDATION').message,
    ).toMatch(/no custom emoji :nosuch:/);
    // Another workspace's emoji is not this one's.
    const elsewhere = await send(t, otto, otherGeneral, 'hi');
    expectCode(await t.gql(REACT, { m: elsewhere.id, e: ':partyparrot:' }, otto), 'VALIDATION');

    expectCode(await t.gql(DELETE, { s: serverId, n: 'partyparrot' }, mike), 'FORBIDDEN');
    expect(ok(await t.gql(DELETE, { s: serverId, n: ':PartyParrot:' }, mona))).toEqual({
      deleteCustomEmoji: true,
    });
    expectCode(await t.gql(DELETE, { s: serverId, n: 'partyparrot' }, mona), 'NOT_FOUND');
    // The reaction keeps its text; it cannot be added again but can be taken back.
    expectCode(await t.gql(REACT, { m: msg.id, e: ':partyparrot:' }, mike), 'VALIDATION');
    const after = ok(await t.gql(UNREACT, { m: msg.id, e: ':partyparrot:' }, gus)).removeReaction;
    expect(after.reactions).toEqual([{ emoji: ':dance:', count: 1 }]);
  });

  it('let a deleted emoji image go with the sweep', async () => {
    const made = ok(
      await create(olga, {
        name: 'doomed',
        image: b64(await makeImage('webp')),
        contentType: 'image/webp',
      }),
    ).createCustomEmoji;
    const sha = (made.url as string).slice('/api/files/avatars/'.length, -'.webp'.length);
    ok(await t.gql(DELETE, { s: serverId, n: 'doomed' }, olga));
    expect((await get(made.url, olga)).statusCode).toBe(404);
    clock.advance(2 * HOUR_MS);
    await t.ctx.services.files.sweep();
    expect(await t.ctx.services.files.blobs.size(sha)).toBeNull();
  });

  it('are refused in the direct space', async () => {
    expectCode(await list(olga, DIRECT_SPACE_ID), 'VALIDATION');
  });
});

describe('custom_emoji switched off', () => {
  it('answers FEATURE_DISABLED everywhere, deletes nothing, and all returns when on', async () => {
    const kept = ok(await list(olga)).customEmojis as Array<{ name: string; url: string }>;
    const dance = kept.find((e) => e.name === 'dance')!;
    const msg = await send(t, mike, general, 'before');
    await t.close();

    t = await createTestApp({ clock, database, env: { SVC_FEATURES_DISABLED: 'custom_emoji' } });
    [olga, mike] = await Promise.all([signIn(t, olga.username), signIn(t, mike.username)]);
    for (const res of [
      await list(olga),
      await create(olga, { name: 'newone' }),
      await t.gql(DELETE, { s: serverId, n: 'dance' }, olga),
      await t.gql(REACT, { m: msg.id, e: ':dance:' }, mike),
    ]) {
      expect(expectCode(res, 'FEATURE_DISABLED').extensions!.feature).toBe('custom_emoji');
    }
    // Unicode reactions still work.
    ok(await t.gql(REACT, { m: msg.id, e: '👍' }, mike));
    const image = await get(dance.url, mike);
    expect(image.statusCode).toBe(403);
    expect(image.json()).toMatchObject({ code: 'FEATURE_DISABLED', feature: 'custom_emoji' });
    await t.close();

    t = await createTestApp({ clock, database });
    [olga, mike] = await Promise.all([signIn(t, olga.username), signIn(t, mike.username)]);
    expect(ok(await list(olga)).customEmojis).toEqual(kept);
    expect((await get(dance.url, mike)).statusCode).toBe(200);
  });
});

describe('workspace deletion', () => {
  it('removes the workspace emoji and lets their images go', async () => {
    const wid = (await createWorkspace(t, olga, 'Doomed')).id;
    const made = ok(
      await t.gql(
        CREATE,
        { i: { serverId: wid, name: 'gone', contentType: 'image/png', image: b64(png) } },
        olga,
      ),
    ).createCustomEmoji;
    ok(
      await t.gql(
        'mutation($i: DeleteWorkspaceInput!) { deleteWorkspace(input: $i) { deleted } }',
        { i: { serverId: wid, confirmName: 'Doomed' } },
        olga,
      ),
    );
    const rows = await t.ctx.db.kysely
      .selectFrom('custom_emoji')
      .select('id')
      .where('workspaceId', '=', wid)
      .execute();
    expect(rows).toEqual([]);
    expect((await get(made.url, olga)).statusCode).toBe(404);
  });
});
