/// <reference lib="dom" />
// End-to-end encrypted conversations in the browser (docs/web-client-encrypted.md): an encrypted
// group started by one person, invitations accepted and declined, two browsers reading each other
// through MLS run in a worker, a third person added later who reads only what came after, a
// reload that keeps what this browser read, a browser linked later added to the group, the
// group's tree checked against the server's list, a message's sender checked against its author,
// and a password account asked before it enrols. Every request and WebSocket frame of the pages
// is recorded, and none holds the plaintext.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import {
  ApiSession,
  composer,
  createInviteLink,
  joinByInvite,
  openDirect,
  personPage,
  shot,
  signUpWithWorkspace,
  serveThisFile,
  signIn,
  timeline,
  type Person,
  type TestServer,
} from './harness.js';
import { pageGql, sendSecret } from './encrypted-helpers.js';

let server: TestServer;
let browser: Browser;
let alice: Person;
let bob: Person;
let carol: Person;
let dave: Person;
let invite = '';

/** Everything the pages of these contexts sent or received: request bodies and frames. */
const wire: string[] = [];
function record(context: BrowserContext, page: Page): void {
  context.on('request', (r) => {
    wire.push(`${r.method()} ${r.url()} ${r.postData() ?? ''}`);
  });
  page.on('websocket', (ws) => {
    ws.on('framesent', (f) => wire.push(String(f.payload)));
    ws.on('framereceived', (f) => wire.push(String(f.payload)));
  });
}

const SECRETS = [
  'The mill opens at nine, bring the blue key',
  'Agreed: blue key, nine sharp',
  'Dave, welcome: the plan is on the table',
  'Back after a reload, still in the group',
  'Erin writes from a browser set up just now',
  'For both of your browsers, Bob',
  'Written on the browser linked today',
  'Carol is back in, with the notes',
  'Only Bob wrote this, never Alice',
];

async function currentDevice(p: Page): Promise<string> {
  const d = await pageGql<{ myDevices: Array<{ id: string; current: boolean }> }>(
    p,
    '{ myDevices { id current } }',
  );
  return d.myDevices.find((x) => x.current)!.id;
}

/** The GraphQL operation (and its variables' input) a request of the app carries, if any. */
function operation(postData: string | null): { query: string; input: Record<string, unknown> } {
  try {
    const b = JSON.parse(postData ?? '') as { query?: string; variables?: { i?: unknown } };
    return { query: b.query ?? '', input: (b.variables?.i ?? {}) as Record<string, unknown> };
  } catch {
    return { query: '', input: {} };
  }
}

let bobPhone: Person;

serveThisFile(
  async (s) => {
    ({ server, browser } = s);
    alice = await personPage(browser, server.url);
    bob = await personPage(browser, server.url);
    carol = await personPage(browser, server.url);
    dave = await personPage(browser, server.url);
    for (const p of [alice, bob, carol, dave]) record(p.context, p.page);
  },
  { env: { SVC_SIGNUP_REQUIRE_KEYS: 'false' } },
);

describe('encrypted conversations in the browser', () => {
  it('sets four people up in one workspace', async () => {
    await signUpWithWorkspace(alice.page, 'alice', 'Alice', 'Team');
    invite = await createInviteLink(alice.page);
    await joinByInvite(bob.page, invite, 'bob', 'Bob');
    await joinByInvite(carol.page, invite, 'carol', 'Carol');
    await joinByInvite(dave.page, invite, 'dave', 'Dave');
  });

  it('starts an encrypted group: the others are invited, one declines, one accepts', async () => {
    const a = alice.page;
    await openDirect(a);
    await a.getByRole('button', { name: 'New message' }).click();
    const dialog = a.getByRole('dialog', { name: 'New message' });
    await dialog.getByRole('checkbox', { name: /Bob/ }).check();
    await dialog.getByRole('checkbox', { name: /Carol/ }).check();
    await dialog.getByRole('checkbox', { name: /End-to-end encrypted/ }).check();
    await dialog.getByRole('button', { name: 'Start group conversation' }).click();
    // The lock on the conversation and in the box.
    await a.getByRole('heading', { name: /Bob, Carol/ }).waitFor({ timeout: 30_000 });
    await a.getByRole('heading', { name: /End-to-end encrypted/ }).waitFor();
    await a.getByText(/only the devices in this conversation can read/).waitFor();
    await composer(a).waitFor();
    expect(await composer(a).getAttribute('aria-label')).toMatch(/^Encrypted message to/);

    // Carol sees a pending invitation: no messages, no unread count; she declines.
    const c = carol.page;
    await openDirect(c);
    const carolInvite = c.getByRole('link', { name: /invitation, end-to-end encrypted/ });
    await carolInvite.click();
    await c.getByText('You are invited to an encrypted conversation').waitFor();
    expect(await c.getByRole('log').count()).toBe(0);
    expect(await c.locator('#composer-input').count()).toBe(0);
    await checkA11y(c, 'encrypted invitation');
    await shot(c, '40-encrypted-invitation');
    await c.getByRole('button', { name: 'Decline' }).click();
    await carolInvite.waitFor({ state: 'detached' });

    // Bob accepts: this browser is set up (his key account needs no question), Alice's
    // device adds it with a Commit, and it joins from the Welcome.
    const b = bob.page;
    await openDirect(b);
    await b.getByRole('link', { name: /invitation/ }).click();
    await b.getByRole('button', { name: 'Accept' }).click();
    await composer(b).waitFor({ timeout: 30_000 });
  });

  it('lets the two read each other, with nothing in the clear on the wire', async () => {
    const a = alice.page;
    const b = bob.page;
    await sendSecret(a, SECRETS[0]!);
    await timeline(b).getByText(SECRETS[0]!, { exact: true }).waitFor({ timeout: 30_000 });
    await sendSecret(b, SECRETS[1]!);
    await timeline(a).getByText(SECRETS[1]!, { exact: true }).waitFor({ timeout: 30_000 });
    await shot(a, '41-encrypted-conversation');
    await checkA11y(a, 'encrypted conversation');
  });

  it('keeps what this browser read and its group across a reload', async () => {
    const b = bob.page;
    await b.reload();
    await timeline(b).getByText(SECRETS[0]!, { exact: true }).waitFor({ timeout: 30_000 });
    await timeline(b).getByText(SECRETS[1]!, { exact: true }).waitFor();
    // The group's state came back too: Bob can still write, and Alice read him.
    await sendSecret(b, SECRETS[3]!);
    await timeline(alice.page).getByText(SECRETS[3]!, { exact: true }).waitFor({ timeout: 30_000 });
  });

  it('adds a third person later, who reads only what came after', async () => {
    const a = alice.page;
    await a.getByRole('button', { name: 'Add people' }).click();
    const dialog = a.getByRole('dialog', { name: /Add people/ });
    await dialog.getByRole('checkbox', { name: /Dave/ }).check();
    await dialog.getByRole('button', { name: 'Add' }).click();
    await dialog.waitFor({ state: 'detached' });

    const d = dave.page;
    await openDirect(d);
    await d.getByRole('link', { name: /invitation/ }).click();
    await d.getByRole('button', { name: 'Accept' }).click();
    await composer(d).waitFor({ timeout: 30_000 });
    // Alice's device adds Dave's (the Commit and Welcome), then she writes.
    await expect
      .poll(() => d.locator('.e2ee-note').count(), { timeout: 30_000 })
      .toBeGreaterThan(0);
    await sendSecret(a, SECRETS[2]!);
    await timeline(d).getByText(SECRETS[2]!, { exact: true }).waitFor({ timeout: 30_000 });
    await timeline(bob.page).getByText(SECRETS[2]!, { exact: true }).waitFor({ timeout: 30_000 });
    // The earlier two are said in words, never shown.
    await timeline(d)
      .getByText('Sent before this browser joined the conversation, so it cannot be read here.')
      .first()
      .waitFor();
    expect(await timeline(d).getByText(SECRETS[0]!).count()).toBe(0);
    expect(await timeline(d).getByText(SECRETS[1]!).count()).toBe(0);
    await shot(d, '42-encrypted-joined-later');
  });

  it('adds a browser a member links later to the group, which reads what comes after', async () => {
    bobPhone = await personPage(browser, server.url);
    record(bobPhone.context, bobPhone.page);
    const n = bobPhone.page;
    await n.goto('/');
    await n.getByRole('button', { name: 'Add this browser to it' }).click();
    await n
      .getByRole('form', { name: 'Add this browser to your account' })
      .getByLabel('Username')
      .fill('bob');
    await n.getByRole('button', { name: 'Ask to add this browser' }).click();
    const code = (await n.locator('.code').textContent())!.trim();
    const b = bob.page;
    await b.getByRole('button', { name: 'Settings' }).click();
    await b.getByRole('link', { name: 'Devices and keys' }).click();
    await b.getByLabel('The code the new device shows').fill(code);
    await b.getByRole('button', { name: 'Approve' }).click();
    await n.getByRole('navigation', { name: 'Workspaces' }).waitFor({ timeout: 20_000 });

    // The new browser sets itself up on sign-in; a browser already in the group adds it with a
    // Commit (the server lists it in mlsGroupState.pendingAdditions), and it joins.
    await openDirect(n);
    await n.getByRole('link', { name: /Alice/ }).first().click();
    await n.locator('.e2ee-note[data-state="in"]').waitFor({ timeout: 30_000 });
    await timeline(n)
      .getByText('Sent before this browser joined the conversation, so it cannot be read here.')
      .first()
      .waitFor({ timeout: 30_000 });
    expect(await timeline(n).getByText(SECRETS[2]!).count()).toBe(0);
    await sendSecret(alice.page, SECRETS[5]!);
    await timeline(n).getByText(SECRETS[5]!, { exact: true }).waitFor({ timeout: 30_000 });
    await sendSecret(n, SECRETS[6]!);
    await timeline(alice.page).getByText(SECRETS[6]!, { exact: true }).waitFor({ timeout: 30_000 });
    // Everyone honest: the tree and the server's list agree.
    expect(await alice.page.locator('.e2ee-mismatch').count()).toBe(0);
    expect(await n.locator('.e2ee-mismatch').count()).toBe(0);
    await shot(n, '44-encrypted-linked-browser');
  });

  it('says in words when the server’s list of devices differs from the group’s', async () => {
    // A dishonest committer: whichever browser commits Carol's addition also declares another
    // member's device removed, which only the server's list believes (docs/e2ee.md).
    const pages = [alice, bob, bobPhone, dave];
    const ids = await Promise.all(pages.map((p) => currentDevice(p.page)));
    const [aliceDevice, , , daveDevice] = ids;
    let tampered = 0;
    for (const [i, p] of pages.entries()) {
      await p.context.route('**/api', async (route) => {
        const op = operation(route.request().postData());
        const added = op.input.addedDeviceIds;
        if (!op.query.includes('CommitMlsGroup') || !Array.isArray(added) || !added.length) {
          return route.continue();
        }
        tampered++;
        const victim = ids[i] === daveDevice ? aliceDevice : daveDevice;
        const body = JSON.parse(route.request().postData()!) as { variables: { i: object } };
        body.variables.i = { ...body.variables.i, removedDeviceIds: [victim] };
        return route.continue({ postData: JSON.stringify(body) });
      });
    }
    const a = alice.page;
    await a.getByRole('button', { name: 'Add people' }).click();
    const dialog = a.getByRole('dialog', { name: /Add people/ });
    await dialog.getByRole('checkbox', { name: /Carol/ }).check();
    await dialog.getByRole('button', { name: 'Add' }).click();
    await dialog.waitFor({ state: 'detached' });
    const c = carol.page;
    await openDirect(c);
    await c.getByRole('link', { name: /invitation/ }).click();
    await c.getByRole('button', { name: 'Accept' }).click();
    await c.locator('.e2ee-note[data-state="in"]').waitFor({ timeout: 30_000 });
    expect(tampered).toBeGreaterThan(0);
    for (const p of pages) await p.context.unroute('**/api');

    await sendSecret(c, SECRETS[7]!);
    await timeline(a).getByText(SECRETS[7]!, { exact: true }).waitFor({ timeout: 30_000 });
    const warning = a
      .getByRole('alert')
      .filter({ hasText: 'Check who can read this conversation' });
    await warning.waitFor({ timeout: 30_000 });
    await warning.getByText(/1 device can read it that the server does not list/).waitFor();
    await shot(a, '45-encrypted-device-mismatch');
  });

  it('does not show a message as its author’s when another person’s device encrypted it', async () => {
    // Bob's new browser writes; the test holds its request back and sends the same ciphertext
    // (with its franking commitment) as Alice's next message, through the real API.
    const n = bobPhone.page;
    let held: Record<string, unknown> | null = null;
    await bobPhone.context.route('**/api', async (route) => {
      const op = operation(route.request().postData());
      if (!op.query.includes('SendEncryptedMessage')) return route.continue();
      held = op.input;
      return route.abort();
    });
    await composer(n).fill(SECRETS[8]!);
    await composer(n).press('Enter');
    await expect.poll(() => held, { timeout: 30_000 }).not.toBeNull();
    await bobPhone.context.unroute('**/api');
    await alice.context.route('**/api', async (route) => {
      const body = route.request().postData();
      if (!operation(body).query.includes('SendEncryptedMessage')) return route.continue();
      const b = JSON.parse(body!) as { variables: { i: object } };
      b.variables.i = {
        ...b.variables.i,
        ciphertext: held!.ciphertext,
        frankingCommitment: held!.frankingCommitment,
      };
      return route.continue({ postData: JSON.stringify(b) });
    });
    const a = alice.page;
    await composer(a).fill('An innocent line from Alice');
    await composer(a).press('Enter');
    await timeline(a).getByText('An innocent line from Alice').waitFor({ timeout: 30_000 });
    await alice.context.unroute('**/api');
    // Dave's browser decrypts Bob's words under Alice's name: hidden, and said why.
    const d = dave.page;
    await d.getByRole('link', { name: /Alice/ }).first().click();
    await timeline(d)
      .getByText('Hidden: this message was encrypted on a device that is not Alice’s', {
        exact: false,
      })
      .waitFor({ timeout: 30_000 });
    expect(await timeline(d).getByText(SECRETS[8]!).count()).toBe(0);
  });

  it('reacts to an encrypted message, and reports one with its franking proof', async () => {
    const reported = 'Report this: the blue key opens the office too';
    const a = alice.page;
    const d = dave.page;
    await sendSecret(a, reported);
    const msg = timeline(d).locator('article.msg', { hasText: reported });
    await msg.waitFor({ timeout: 30_000 });
    // A reaction, as on any message: the others see it live.
    await msg.hover();
    await msg.getByRole('button', { name: 'Add a reaction' }).click();
    await d.getByRole('searchbox', { name: 'Search emoji' }).fill('thumbs');
    await d.keyboard.press('Enter');
    await timeline(a)
      .locator('article.msg', { hasText: reported })
      .getByRole('button', { name: /👍 1/ })
      .waitFor({ timeout: 30_000 });

    // The report carries the decrypted text and its opening key; the server verifies both.
    await msg.hover();
    await msg.getByRole('button', { name: 'Report' }).click();
    const dialog = d.getByRole('dialog', { name: 'Report this message' });
    await dialog.getByText(/reporting sends this message’s text to the\s+moderators/).waitFor();
    const answered = d.waitForResponse((r) =>
      operation(r.request().postData()).query.includes('ReportMessage'),
    );
    await dialog.getByRole('button', { name: 'Report', exact: true }).click();
    const res = (await (await answered).json()) as {
      data: { reportMessage: { snapshot: { frankingVerified: boolean } } };
    };
    expect(res.data.reportMessage.snapshot.frankingVerified).toBe(true);
    await d.getByText(/proven to be what its sender wrote/).waitFor();
    // The text left Dave's browser in that report only, by design.
    const sent = wire.filter((w) => w.includes(reported));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/ReportMessage/);
  });

  it('sent no plaintext in any request or WebSocket frame', () => {
    expect(wire.length).toBeGreaterThan(50);
    for (const secret of SECRETS) {
      const hits = wire.filter((w) => w.includes(secret));
      expect(hits, `"${secret}" left a browser`).toEqual([]);
      // Not as a JSON string either (quotes and escapes).
      const json = JSON.stringify(secret).slice(1, -1);
      expect(wire.filter((w) => w.includes(json))).toEqual([]);
    }
    for (const p of [alice, bob, carol, dave, bobPhone]) expect(p.problems).toEqual([]);
  });

  it('asks a password account before enrolling, and says what enrolling ends', async () => {
    server.cli(['account', 'create', 'erin', '--password-stdin'], 'erin-password-1\n');
    const api = await ApiSession.signIn(server, 'erin', 'erin-password-1');
    await api.gql('mutation($t: String!) { joinWorkspace(token: $t) { id } }', {
      t: new URL(invite).pathname.split('/').pop(),
    });
    const erin = await personPage(browser, server.url);
    record(erin.context, erin.page);
    const e = erin.page;
    await signIn(e, 'erin', 'erin-password-1');
    await openDirect(e);
    const start = async () => {
      await e.getByRole('button', { name: 'New message' }).click();
      const dialog = e.getByRole('dialog', { name: 'New message' });
      await dialog.getByRole('checkbox', { name: /Alice/ }).check();
      await dialog.getByRole('checkbox', { name: /End-to-end encrypted/ }).check();
      await dialog.getByRole('button', { name: 'Start conversation' }).click();
    };
    await start();
    const ask = e.getByRole('dialog', { name: 'Set up encryption on this browser?' });
    await ask.getByText(/your password stops working/).waitFor();
    await ask.getByText(/signed out now/).waitFor();
    await shot(e, '43-enrol-question');
    await ask.getByRole('button', { name: 'Cancel' }).click();
    // Cancelled: nothing changed, the password still signs in.
    await ApiSession.signIn(server, 'erin', 'erin-password-1');
    await e.keyboard.press('Escape');
    await start();
    await ask.getByRole('button', { name: 'Set up and sign out elsewhere' }).click();
    await e.getByRole('heading', { name: /Alice/ }).waitFor({ timeout: 30_000 });
    await e.getByRole('heading', { name: /End-to-end encrypted/ }).waitFor();
    await expect(ApiSession.signIn(server, 'erin', 'erin-password-1')).rejects.toThrow();
    // The other session ended with the enrolment.
    await expect(api.gql('{ me { id } }')).rejects.toThrow(/UNAUTHENTICATED/);
    await sendSecret(e, SECRETS[4]!);
    // Alice's browser joined from its Welcome in the background, and reads Erin.
    await alice.page.getByRole('link', { name: /^erin/i }).click();
    await timeline(alice.page).getByText(SECRETS[4]!, { exact: true }).waitFor({ timeout: 30_000 });
    expect(erin.problems).toEqual([]);
    for (const w of wire) expect(w.includes(SECRETS[4]!)).toBe(false);
  });
});
