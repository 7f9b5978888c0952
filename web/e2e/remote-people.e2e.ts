/// <reference lib="dom" />
// People of another server's workspace (docs/web-client.md, "Spaces on other servers"): two real
// servers on loopback, relay A and host B, as in remote-spaces.e2e.ts. Bob, a person of B, has a
// picture and a custom emoji in his workspace; Alice, a person of A, sees both in her own app,
// fetched through A's relay route and checked, each picture once per page. Alice and Bob talk in
// a direct conversation on B, live both ways; Carol of B writes to Alice first; Bob's @channel
// shows on Alice's rail and in her notifications.
import type { Browser, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import type { TestServer } from './harness.js';
import {
  assertBuilt,
  composer,
  createInviteLink,
  createWorkspace,
  freePort,
  joinByInvite,
  launchBrowser,
  openDirect,
  personPage,
  send,
  shot,
  signUp,
  signUpWithWorkspace,
  timeline,
  type Person,
} from './harness.js';
import { accountIdAt, apiAt, esc, federating, square } from './remote-harness.js';

let relay: TestServer;
let host: TestServer;
let hostId = '';
let browser: Browser;
let alice: Person;
let bob: Person;
let link = '';
/** Every request Alice's page made. */
const aliceRequests: Request[] = [];

/** The pictures (avatars and emoji, both `/api/files/...`) Alice's page asked for. */
const pictureRequests = () => aliceRequests.filter((r) => r.url().includes('/api/files/'));

beforeAll(async () => {
  assertBuilt();
  const [a, b] = [await freePort(), await freePort()];
  [relay, host] = await Promise.all([federating(a), federating(b)]);
  hostId = `127.0.0.1:${b}`;
  browser = await launchBrowser();
  alice = await personPage(browser, relay.url);
  bob = await personPage(browser, host.url);
  alice.page.on('request', (r) => aliceRequests.push(r));

  // Bob's workspace on B, with his picture and an emoji; Alice joins it from her app at A.
  const b1 = bob.page;
  await signUpWithWorkspace(b1, 'bob', 'Bob', 'Harbour');
  await b1.getByRole('button', { name: 'Settings' }).click();
  await b1
    .getByLabel(/Choose a picture/)
    .setInputFiles({ name: 'bob.png', mimeType: 'image/png', buffer: await square('#ff8800') });
  await b1.getByText('Your picture was saved.').waitFor();
  await b1.goBack();
  await b1.getByRole('heading', { name: '#general' }).waitFor();
  await b1.getByRole('button', { name: 'Invite people' }).click();
  await b1.getByRole('tab', { name: 'Custom emoji' }).click();
  await b1.getByLabel('Name', { exact: true }).fill('anchor');
  await b1.getByLabel('Image').setInputFiles({
    name: 'anchor.png',
    mimeType: 'image/png',
    buffer: await square('#22aa44', 32),
  });
  await b1.getByRole('button', { name: 'Add emoji' }).click();
  await b1.getByRole('list', { name: 'Custom emoji' }).getByText(':anchor:').waitFor();
  await b1.keyboard.press('Escape');
  link = await createInviteLink(b1);

  const p = alice.page;
  await p.goto('/');
  await signUp(p, 'alice', 'Alice');
  await p.getByRole('button', { name: 'Create or join a workspace' }).click();
  await p.getByRole('dialog').getByLabel('Invite link or code').fill(link);
  await p.getByRole('button', { name: 'Join', exact: true }).click();
  await p.getByRole('heading', { name: '#general' }).waitFor({ timeout: 20_000 });
  // Two servers, two people, a picture and an emoji: more than the default on a busy machine.
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([relay?.dispose(), host?.dispose()]);
});

describe('people of a workspace on another server', () => {
  it('shows the host’s pictures and custom emoji, each fetched once through the relay', async () => {
    // Bob and Alice take turns, so Bob's picture stands beside several of his messages.
    for (const i of [1, 2, 3]) {
      await composer(bob.page).fill(`Ahoy ${i} :anchor:`);
      await composer(bob.page).press('Enter');
      await timeline(bob.page).getByText(`Ahoy ${i}`).waitFor();
      await timeline(alice.page).getByText(`Ahoy ${i}`).waitFor({ timeout: 20_000 });
      await send(alice.page, `Aye ${i}`);
    }
    const p = alice.page;
    const fromBob = timeline(p).locator('article.msg', { hasText: 'Ahoy' });
    await expect.poll(() => fromBob.count()).toBe(3);
    for (let i = 0; i < 3; i++) {
      const avatar = fromBob.nth(i).locator('img.avatar');
      await expect.poll(() => avatar.getAttribute('src'), { timeout: 15_000 }).toMatch(/^blob:/);
      const emoji = fromBob.nth(i).getByRole('img', { name: ':anchor:' });
      await expect.poll(() => emoji.getAttribute('src'), { timeout: 15_000 }).toMatch(/^blob:/);
      await expect
        .poll(() => emoji.evaluate((el) => (el as HTMLImageElement).naturalWidth))
        .toBe(32);
    }
    // The member list shows his picture too, from the same fetch.
    await p.getByRole('button', { name: /^Members \(/ }).click();
    const members = p.getByRole('complementary', { name: 'Members' });
    await expect
      .poll(() => members.locator('img.avatar').first().getAttribute('src'), { timeout: 15_000 })
      .toMatch(/^blob:/);
    await p.keyboard.press('Escape');
    // Each picture was asked of the host once, through her own server's relay route.
    const asked = pictureRequests();
    expect(asked).toHaveLength(2);
    expect(new Set(asked.map((r) => r.url())).size).toBe(2);
    for (const r of asked) {
      expect(r.url().startsWith(`${relay.url}/api/remote/${hostId}/api/files/`)).toBe(true);
      expect(r.headers()['svc-device-signature']).toBeTruthy();
    }
    // The emoji is offered in the picker of the host's workspace, with its picture.
    await composer(p).fill('Going :anch');
    await expect
      .poll(() =>
        p
          .getByRole('listbox', { name: 'Suggestions' })
          .locator('img.custom-emoji')
          .first()
          .getAttribute('src'),
      )
      .toMatch(/^blob:/);
    await composer(p).fill('');
    await shot(p, 'remote-04-pictures');
    await checkA11y(p, 'pictures of a workspace on another server');
  });

  it('lets a person of the relay and a person of the host talk directly, live', async () => {
    const a = alice.page;
    const b = bob.page;
    // From the member list of the host's workspace: the conversation is made on the host, in
    // her direct space there, through her own server.
    await a.getByRole('button', { name: /^Members \(/ }).click();
    await a
      .getByRole('complementary', { name: 'Members' })
      .getByRole('button', { name: 'Message' })
      .click();
    await a.getByRole('heading', { name: /Bob/ }).waitFor({ timeout: 15_000 });
    const asked = aliceRequests.find((r) => r.postData()?.includes('createConversation'));
    expect(asked?.url()).toBe(`${relay.url}/api/remote/${hostId}/api`);
    expect(asked?.headers()['svc-device-signature']).toBeTruthy();
    // Among her direct messages, marked with the host.
    await a
      .getByRole('navigation', { name: /^Conversations in direct messages/ })
      .getByRole('link', { name: new RegExp(`Bob, on ${esc(hostId)}`) })
      .waitFor();
    await send(a, 'Hi Bob, just between us');

    // Bob's own direct messages on his server: her message is there, unread.
    await openDirect(b);
    await b.getByRole('link', { name: /alice/i }).click();
    await timeline(b).getByText('Hi Bob, just between us').waitFor();

    // Both read the other live, with the conversation open.
    await send(b, 'Hello Alice, privately');
    await timeline(a).getByText('Hello Alice, privately').waitFor({ timeout: 20_000 });
    await send(a, 'Read you live');
    await timeline(b).getByText('Read you live').waitFor({ timeout: 20_000 });
    // Her own messages are hers there too.
    expect(await timeline(a).locator('article.msg', { hasText: 'Read you live' }).count()).toBe(1);
    await shot(a, 'remote-05-direct');
    await checkA11y(a, 'a direct conversation on another server');

    // After a reload her direct conversations on the host are read again from it.
    await a.reload();
    await a
      .getByRole('navigation', { name: /^Conversations in direct messages/ })
      .getByRole('link', { name: new RegExp(`Bob, on ${esc(hostId)}`) })
      .click({ timeout: 20_000 });
    await timeline(a).getByText('Hello Alice, privately').waitFor({ timeout: 15_000 });
  });

  it('shows a direct conversation a person of the host starts, live', async () => {
    // Carol, a person of the host, writes to Alice first: the conversation is new to her page.
    const carol = await personPage(browser, host.url);
    await carol.page.goto(new URL(link).pathname);
    await carol.page.getByText('You were invited to a workspace').waitFor();
    await signUp(carol.page, 'carol', 'Carol');
    await carol.page.getByRole('heading', { name: '#general' }).waitFor({ timeout: 20_000 });
    await carol.page.getByRole('button', { name: /^Members \(/ }).click();
    await carol.page
      .getByRole('complementary', { name: 'Members' })
      .locator('li', { hasText: /alice/i })
      .getByRole('button', { name: 'Message' })
      .click();
    await carol.page.getByRole('heading', { name: /alice/i }).waitFor({ timeout: 15_000 });
    await send(carol.page, 'Alice, a word from Carol');
    const a = alice.page;
    await openDirect(a);
    await a
      .getByRole('navigation', { name: /^Conversations in direct messages/ })
      .getByRole('link', { name: new RegExp(`Carol, on ${esc(hostId)}`) })
      .click({ timeout: 20_000 });
    await timeline(a).getByText('Alice, a word from Carol').waitFor();
    expect(carol.problems).toEqual([]);
    await carol.context.close();
  });

  it('lists a DM request waiting on the host with her own, and accepts it there', async () => {
    // Dave, a person of the host who shares no workspace with Alice, writes to her: the host
    // keeps a DM request for her account there (docs/direct-messages.md), which her page lists.
    const dave = await personPage(browser, host.url);
    await signUpWithWorkspace(dave.page, 'dave', 'Dave', 'Dock');
    const aliceThere = accountIdAt(host, `alice@${new URL(relay.url).host}`);
    const started = await apiAt(
      dave.page,
      `mutation($m: [ID!]!) { createConversation(input: { memberIds: $m }) {
        conversation { id } dmRequestsSent { id } } }`,
      { m: [aliceThere] },
    );
    expect(started.errors).toBeUndefined();
    const conversation = started.data.createConversation.conversation.id as string;
    expect(started.data.createConversation.dmRequestsSent).toHaveLength(1);
    const sent = await apiAt(
      dave.page,
      `mutation($c: ID!) { sendMessage(input: { conversationId: $c, text: "Dave here, from the dock" }) { id } }`,
      { c: conversation },
    );
    expect(sent.errors).toBeUndefined();

    const a = alice.page;
    await openDirect(a);
    await a.getByRole('button', { name: 'Message requests (1)' }).click({ timeout: 20_000 });
    const dialog = a.getByRole('dialog', { name: 'Message requests' });
    await dialog.getByRole('heading', { name: `Dave, on ${hostId}` }).waitFor();
    await dialog.getByText('Dave here, from the dock').waitFor();
    await dialog.getByRole('button', { name: 'Accept' }).click();
    await a.getByText('Accepted: the conversation is in your direct messages.').waitFor();
    const answered = aliceRequests.find((r) => r.postData()?.includes('AcceptDmRequest'));
    expect(answered?.url()).toBe(`${relay.url}/api/remote/${hostId}/api`);
    await a
      .getByRole('navigation', { name: /^Conversations in direct messages/ })
      .getByRole('link', { name: new RegExp(`Dave, on ${esc(hostId)}`) })
      .click({ timeout: 20_000 });
    await timeline(a).getByText('Dave here, from the dock').waitFor();
    // On the host she is a member now, and no request waits.
    const after = await apiAt(dave.page, `query($c: ID!) { conversation(id: $c) { memberIds } }`, {
      c: conversation,
    });
    expect(after.data.conversation.memberIds).toContain(aliceThere);
    await expect.poll(() => a.getByRole('button', { name: /^Message requests/ }).count()).toBe(0);
    expect(dave.problems).toEqual([]);
    await dave.context.close();
  });

  it('counts a host’s mentions in her rail and lists them in her notifications', async () => {
    const a = alice.page;
    // She reads a direct conversation; Bob calls the channel in his workspace.
    const inbox = a.getByRole('button', { name: /^Notifications/ });
    // Everything she was told is read (she has the conversation open).
    await expect
      .poll(async () => await inbox.getAttribute('aria-label'), { timeout: 15_000 })
      .toBe('Notifications');
    await bob.page
      .getByRole('navigation', { name: 'Workspaces' })
      .getByRole('button', { name: /^Harbour/ })
      .click();
    await bob.page.getByRole('link', { name: /general/ }).click();
    await bob.page.getByRole('heading', { name: '#general' }).waitFor();
    await send(bob.page, '@channel the harbour closes at six');
    const seesOneMention = async () => {
      await a
        .getByRole('navigation', { name: 'Workspaces' })
        .getByRole('button', { name: new RegExp(`^Harbour on ${esc(hostId)}.*1 mention`) })
        .waitFor({ timeout: 20_000 });
      await expect
        .poll(async () => (await inbox.getAttribute('aria-label')) ?? '', { timeout: 15_000 })
        .toBe('Notifications, 1 unread');
    };
    // Her rail counts the mention on the host's workspace, and her notifications count it.
    await seesOneMention();
    // Read again from the host at a reload, as this server's are.
    await a.reload();
    await seesOneMention();
    // The list holds it, read from the host through her server; choosing it opens the message.
    await inbox.click();
    const list = a.getByRole('list', { name: 'Notifications' });
    const item = list.getByRole('listitem').filter({ hasText: 'the harbour closes at six' });
    await item.waitFor({ timeout: 15_000 });
    expect(await item.textContent()).toContain(`Harbour on ${hostId}`);
    expect(
      aliceRequests.some(
        (r) =>
          r.url() === `${relay.url}/api/remote/${hostId}/api` &&
          r.postData()?.includes('notifications('),
      ),
    ).toBe(true);
    await shot(a, 'remote-06-notifications');
    await checkA11y(a, 'notifications of a host');
    await item.getByRole('button').first().click();
    await a.locator('article.msg', { hasText: 'the harbour closes at six' }).waitFor();
    await expect
      .poll(async () => (await inbox.getAttribute('aria-label')) ?? '', { timeout: 15_000 })
      .toBe('Notifications');

    // Named as the host knows her, `@alice@<relay>`: the host counts it as her mention, and her
    // page shows it as hers.
    const relayId = `127.0.0.1:${relay.port}`;
    await composer(bob.page).fill(`@alice@${relayId} the boat is yours`);
    await composer(bob.page).press('Enter');
    const named = timeline(a).locator('article.msg', { hasText: 'the boat is yours' });
    await named
      .locator('.mention.mention-me', { hasText: `@alice@${relayId}` })
      .waitFor({ timeout: 20_000 });
  });

  it('starts a group with people of the host from New message, one server at a time', async () => {
    const a = alice.page;
    // Erin, a person of Alice's own server, shares a workspace of it with her.
    await createWorkspace(a, 'Home');
    const homeLink = await createInviteLink(a);
    const erin = await personPage(browser, relay.url);
    await joinByInvite(erin.page, homeLink, 'erin', 'Erin');

    await openDirect(a);
    await a.getByRole('button', { name: 'New message' }).click();
    const dialog = a.getByRole('dialog', { name: 'New message' });
    const person = (name: RegExp) => dialog.getByRole('checkbox', { name });
    const onHost = (name: string) =>
      new RegExp(`^${name} @${name.toLowerCase()}, on ${esc(hostId)}$`);
    // The host's people are listed with their server, beside this server's; never herself.
    await person(onHost('Bob')).waitFor({ timeout: 15_000 });
    await person(/^Erin @erin$/).check();
    await person(onHost('Bob')).check();
    await dialog.getByText('A conversation is kept on one server').waitFor();
    expect(
      await dialog.getByRole('button', { name: 'Start group conversation' }).isDisabled(),
    ).toBe(true);
    expect(await person(/alice/i).count()).toBe(0);
    await person(/^Erin @erin$/).uncheck();
    await person(onHost('Carol')).check();
    // Encrypted conversations stay on this server: not offered with a host's people.
    expect(await dialog.getByRole('checkbox', { name: /End-to-end encrypted/ }).isDisabled()).toBe(
      true,
    );
    await dialog.getByRole('button', { name: 'Start group conversation' }).click();
    const asked = aliceRequests.findLast((r) => r.postData()?.includes('createConversation'));
    expect(asked?.url()).toBe(`${relay.url}/api/remote/${hostId}/api`);
    await a.getByRole('heading', { name: 'Bob, Carol' }).waitFor({ timeout: 15_000 });
    await send(a, 'Hello both, from the relay');

    const b = bob.page;
    await openDirect(b);
    await b
      .getByRole('navigation', { name: /^Conversations in direct messages/ })
      .getByRole('link', { name: /Carol/ })
      .click({ timeout: 20_000 });
    await timeline(b).getByText('Hello both, from the relay').waitFor({ timeout: 15_000 });
    expect(erin.problems).toEqual([]);
    await erin.context.close();
  });

  it('leaves no page errors or policy violations', () => {
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });
});
