/// <reference lib="dom" />
// Two tabs of one browser (one device, one MLS state in IndexedDB) in one encrypted group
// (docs/web-client-encrypted.md, "Two tabs"): both send, one after the other and at once, both
// read, and a Commit adding a member is made while both are open; nobody's browser loses a
// message and the group never forks.
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import {
  acceptInvitation,
  pageGql,
  sendSecret,
  startEncryptedGroup,
  UNREADABLE,
} from './encrypted-helpers.js';
import {
  createInviteLink,
  joinByInvite,
  openDirect,
  personPage,
  signUpWithWorkspace,
  serveThisFile,
  timeline,
  type Person,
  type TestServer,
} from './harness.js';

let server: TestServer;
let browser: Browser;
let alice: Person;
let bob: Person;
let carol: Person;
/** Alice's second tab, in the same browser context as her first. */
let tab2: Page;

const T = [
  'First tab: the boat leaves at six',
  'Second tab: then we meet at half five',
  'First tab, at the same moment as the second',
  'Second tab, at the same moment as the first',
  'Bob answers both tabs',
  'Second tab writes after Carol came in',
  'First tab writes after Carol came in',
  'Carol reads both of Alice’s tabs',
];

async function reads(p: Page, texts: string[]): Promise<void> {
  for (const t of texts) {
    await timeline(p).getByText(t, { exact: true }).waitFor({ timeout: 30_000 });
  }
}

serveThisFile(
  async (s) => {
    ({ server, browser } = s);
    alice = await personPage(browser, server.url);
    bob = await personPage(browser, server.url);
    carol = await personPage(browser, server.url);
  },
  { env: { SVC_SIGNUP_REQUIRE_KEYS: 'false' } },
);

describe('one device in two tabs of an encrypted conversation', () => {
  it('starts a group with Bob, Carol invited, and opens it in a second tab', async () => {
    await signUpWithWorkspace(alice.page, 'alice', 'Alice', 'Team');
    const invite = await createInviteLink(alice.page);
    await joinByInvite(bob.page, invite, 'bob', 'Bob');
    await joinByInvite(carol.page, invite, 'carol', 'Carol');
    await startEncryptedGroup(alice.page, [/Bob/, /Carol/]);
    await acceptInvitation(bob.page);
    // A first message, so that opening the conversation in the second tab reads its group.
    await sendSecret(alice.page, T[0]!);
    tab2 = await alice.context.newPage();
    tab2.on('pageerror', (e) => alice.problems.push(`page error (tab 2): ${e.message}`));
    await tab2.goto('/');
    await openDirect(tab2);
    await tab2.getByRole('link', { name: /Bob, Carol/ }).click();
    await reads(tab2, [T[0]!]);
    await tab2.locator('.e2ee-note[data-state="in"]').waitFor({ timeout: 30_000 });
  });

  it('sends from both tabs, in turn and at once, and every browser reads all', async () => {
    const a = alice.page;
    await sendSecret(tab2, T[1]!);
    await Promise.all([sendSecret(a, T[2]!), sendSecret(tab2, T[3]!)]);
    await reads(bob.page, T.slice(0, 4));
    await reads(a, T.slice(0, 4));
    await reads(tab2, T.slice(0, 4));
    await sendSecret(bob.page, T[4]!);
    await reads(a, [T[4]!]);
    await reads(tab2, [T[4]!]);
  });

  it('keeps both tabs in the group across a Commit that adds a member', async () => {
    const before = await groupState();
    await acceptInvitation(carol.page);
    // A browser of a member adds Carol's device with a Commit (one of Alice's tabs or Bob's).
    await expect
      .poll(async () => (await groupState()).deviceIds.length, { timeout: 30_000 })
      .toBe(3);
    expect((await groupState()).epoch).toBeGreaterThan(before.epoch);
    await sendSecret(tab2, T[5]!);
    await sendSecret(alice.page, T[6]!);
    await reads(carol.page, [T[5]!, T[6]!]);
    await reads(bob.page, [T[5]!, T[6]!]);
    await sendSecret(carol.page, T[7]!);
    await reads(alice.page, [T[7]!]);
    await reads(tab2, [T[5]!, T[7]!]);
  });

  it('lost no message and forked nothing', async () => {
    for (const p of [alice.page, tab2, bob.page]) {
      await reads(p, T);
      expect(await timeline(p).getByText(UNREADABLE).count()).toBe(0);
      expect(await p.locator('.e2ee-mismatch').count()).toBe(0);
    }
    // Every device's group is at the server's epoch: a fork would leave one behind, unable to
    // read the next message; a last one from Bob reaches both tabs and Carol.
    const last = 'Bob checks that all of you still read him';
    await sendSecret(bob.page, last);
    await reads(alice.page, [last]);
    await reads(tab2, [last]);
    await reads(carol.page, [last]);
    // A reload of one tab reads everything from what the two kept together.
    await tab2.reload();
    await reads(tab2, [...T, last]);
    expect(await timeline(tab2).getByText(UNREADABLE).count()).toBe(0);
    for (const p of [alice, bob, carol]) expect(p.problems).toEqual([]);
  });
});

async function groupState(): Promise<{ epoch: number; deviceIds: string[] }> {
  const conv = await pageGql<{
    inboxConversations: { items: Array<{ id: string; encrypted: boolean }> };
  }>(bob.page, '{ inboxConversations { items { id encrypted } } }');
  const c = conv.inboxConversations.items.find((x) => x.encrypted)!;
  const d = await pageGql<{ mlsGroupState: { epoch: number; deviceIds: string[] } }>(
    bob.page,
    'query($c: ID!) { mlsGroupState(conversationId: $c) { epoch deviceIds } }',
    { c: c.id },
  );
  return d.mlsGroupState;
}
