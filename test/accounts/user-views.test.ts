import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, ManualClock } from '../../src/lib/clock.js';
import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signIn, signUpAndIn } from '../_util/seed.js';
import { makeImage, filePart, postMultipart } from '../files/_image-upload.js';
import { ok, recordQueries, send, sharedChannel } from '../conversations/_helpers.js';
import { cli } from '../moderation/_helpers.js';

const PAGE = `query($c: ID!) { messages(conversationId: $c) { items { id author {
  id username displayName avatarUrl instanceOperator deletionScheduledFor } } } }`;
const REQUEST_DELETION = `mutation($c: String!) { requestAccountDeletion(input: { confirmUsername: $c }) { scheduledFor } }`;

// The authors a page of messages shows are kept per process (services/accounts/view-cache.ts):
// every change of what a `User` shows must reach the next page at once, on this process and from
// the command line (through the outbox and the server's drainer).
describe(`authors shown as User (${TEST_DB})`, () => {
  let t: TestApp;
  const clock = new ManualClock();
  let ann: Agent;
  let bob: Agent;
  let channelId: string;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    ann = await signUpAndIn(t, { username: 'annviews' });
    bob = await signUpAndIn(t, { username: 'bobviews' });
    // Bob owns the workspace, so ann may ask for her account's deletion.
    channelId = await sharedChannel(t, bob, [ann], 'Views');
    await send(t, ann, channelId, 'from ann');
    await send(t, bob, channelId, 'from bob');
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The author of ann's message as `reader`'s page shows it (null once the author is purged). */
  const annAsShown = async (reader: Agent) => {
    const items = ok(await t.gql(PAGE, { c: channelId }, reader)).messages.items as Array<{
      author: Record<string, any> | null;
    }>;
    return items[0]!.author;
  };

  it('reads the authors of a page once, then answers them from memory', async () => {
    expect((await annAsShown(bob))!.username).toBe('annviews');
    const texts = await recordQueries(() => annAsShown(bob));
    expect(texts.filter((s) => /from "account"/i.test(s) && !/"session"/i.test(s))).toEqual([]);
  });

  it('shows a new display name on the next page', async () => {
    await annAsShown(bob);
    ok(
      await t.gql(
        'mutation { updateProfile(input: { displayName: "Ann Renamed" }) { displayName } }',
        {},
        ann,
      ),
    );
    expect((await annAsShown(bob))!.displayName).toBe('Ann Renamed');
  });

  it('shows a new avatar on the next page', async () => {
    expect((await annAsShown(bob))!.avatarUrl).toBeNull();
    const png = await makeImage('png', { width: 64, height: 64 });
    const res = await postMultipart(t, '/api/files/avatar', ann, [
      filePart(png, 'image/png', 'a.png'),
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect((await annAsShown(bob))!.avatarUrl).toBe(res.json().url);
  });

  it("shows the author's own deletion date to them once requested, and its cancellation", async () => {
    expect((await annAsShown(ann))!.deletionScheduledFor).toBeNull();
    ok(await t.gql(REQUEST_DELETION, { c: 'annviews' }, ann));
    expect((await annAsShown(ann))!.deletionScheduledFor).not.toBeNull();
    ok(await t.gql('mutation { cancelAccountDeletion }', {}, ann));
    expect((await annAsShown(ann))!.deletionScheduledFor).toBeNull();
  });

  it('shows an operator grant made on the command line', async () => {
    expect((await annAsShown(ann))!.instanceOperator).toBe(false);
    expect((await cli(t, ['operator', 'grant', 'annviews'])).code).toBe(0);
    // The command line cannot reach the server's memory; the server's drainer brings its event.
    await t.ctx.outbox.drain();
    expect((await annAsShown(ann))!.instanceOperator).toBe(true);
    expect((await cli(t, ['operator', 'revoke', 'annviews'])).code).toBe(0);
    await t.ctx.outbox.drain();
    expect((await annAsShown(ann))!.instanceOperator).toBe(false);
  });

  it('drops a purged author from the page', async () => {
    const page = ok(await t.gql(PAGE, { c: channelId }, bob)).messages.items as Array<{
      id: string;
      author: { username: string } | null;
    }>;
    expect(page[0]!.author!.username).toBe('annviews');
    // A reply keeps ann's message in the channel as a deleted shell after the purge.
    await send(t, bob, channelId, 'a reply', page[0]!.id);
    ok(await t.gql(REQUEST_DELETION, { c: 'annviews' }, ann));
    expect((await annAsShown(bob))!.username).toBe('annviews');
    clock.advance(31 * DAY_MS);
    expect(await t.ctx.services.accountDeletion.purgeDue()).toHaveLength(1);
    // Bob's session has expired meanwhile too.
    const bobAgain = await signIn(t, 'bobviews');
    const items = ok(await t.gql(PAGE, { c: channelId }, bobAgain)).messages.items as Array<{
      id: string;
      author: { username: string } | null;
    }>;
    expect(items.map((m) => [m.id, m.author?.username ?? null])).toEqual([
      [page[0]!.id, null],
      [page[1]!.id, 'bobviews'],
    ]);
  });
});
