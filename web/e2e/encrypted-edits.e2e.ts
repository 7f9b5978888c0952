/// <reference lib="dom" />
// Edits of encrypted messages (docs/web-client-encrypted.md, "Edits"): the server cannot change
// ciphertext, so an edit is a new encrypted message of the current epoch naming the one it
// replaces. The other member's browser shows the message with the new text, marked edited, and
// never the edit on its own, live and after a reload; no request or WebSocket frame of either
// page carries the old or the new text.
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { acceptInvitation, pageGql, sendSecret, startEncryptedGroup } from './encrypted-helpers.js';
import {
  composer,
  createInviteLink,
  joinByInvite,
  personPage,
  serveThisFile,
  signUpWithWorkspace,
  timeline,
  type Person,
  type TestServer,
} from './harness.js';

let server: TestServer;
let alice: Person;
let bob: Person;

/** Everything the pages sent or received: request bodies and WebSocket frames. */
const wire: string[] = [];
function record(context: BrowserContext, page: Page): void {
  context.on('request', (r) => wire.push(`${r.method()} ${r.url()} ${r.postData() ?? ''}`));
  page.on('websocket', (ws) => {
    ws.on('framesent', (f) => wire.push(String(f.payload)));
    ws.on('framereceived', (f) => wire.push(String(f.payload)));
  });
}

const FIRST = 'Meet at the north gate at six';
const EDITED = 'Meet at the south gate at seven instead';
const AGAIN = 'Meet at the south gate at eight, final';

serveThisFile(
  async (s) => {
    server = s.server;
    alice = await personPage(s.browser, server.url);
    bob = await personPage(s.browser, server.url);
    record(alice.context, alice.page);
    record(bob.context, bob.page);
  },
  { env: { SVC_SIGNUP_REQUIRE_KEYS: 'false' } },
);

interface Held {
  id: string;
  text: string | null;
  ciphertext: string | null;
  isDeleted: boolean;
}

/** The encrypted conversation's messages as the server answers them. */
async function serverMessages(p: Page): Promise<Held[]> {
  const convs = await pageGql<{
    inboxConversations: { items: Array<{ id: string; encrypted: boolean }> };
  }>(p, `{ inboxConversations { items { id encrypted } } }`);
  const c = convs.inboxConversations.items.find((x) => x.encrypted)!.id;
  const page = await pageGql<{ messages: { items: Held[] } }>(
    p,
    `query($c: ID!) { messages(conversationId: $c) { items { id text ciphertext isDeleted } } }`,
    { c },
  );
  return page.messages.items;
}

const message = (p: Page, text: string) => timeline(p).locator('article.msg', { hasText: text });

describe('an encrypted message edited', () => {
  it('shows the new text, marked edited, to the other member', async () => {
    await signUpWithWorkspace(alice.page, 'alice', 'Alice', 'Team');
    const invite = await createInviteLink(alice.page);
    await joinByInvite(bob.page, invite, 'bob', 'Bob');
    await startEncryptedGroup(alice.page, [/Bob/]);
    await acceptInvitation(bob.page);
    const a = alice.page;
    const b = bob.page;
    await sendSecret(a, FIRST);
    await message(b, FIRST).waitFor({ timeout: 30_000 });

    // From the message's Edit action.
    await message(a, FIRST).hover();
    await message(a, FIRST).getByRole('button', { name: 'Edit' }).click();
    await a.getByText('Editing a message').waitFor();
    await expect.poll(() => composer(a).inputValue()).toBe(FIRST);
    await composer(a).fill(EDITED);
    await composer(a).press('Enter');
    await message(a, EDITED).getByText('(edited)').waitFor({ timeout: 30_000 });
    await message(b, EDITED).getByText('(edited)').waitFor({ timeout: 30_000 });
    await expect.poll(() => timeline(b).getByText(FIRST).count()).toBe(0);
    // One message in each timeline: the edit is never shown on its own.
    expect(await timeline(b).locator('article.msg').count()).toBe(1);

    // Again from the empty box with the up arrow: the latest edit wins.
    await composer(a).focus();
    await composer(a).press('ArrowUp');
    await a.getByText('Editing a message').waitFor();
    await expect.poll(() => composer(a).inputValue()).toBe(EDITED);
    await composer(a).fill(AGAIN);
    await composer(a).press('Enter');
    await message(b, AGAIN).getByText('(edited)').waitFor({ timeout: 30_000 });
    await expect.poll(() => timeline(b).getByText(EDITED).count()).toBe(0);

    // After a reload both read the latest text, still one message.
    for (const p of [a, b]) {
      await p.reload();
      await message(p, AGAIN).getByText('(edited)').waitFor({ timeout: 30_000 });
      expect(await timeline(p).locator('article.msg').count()).toBe(1);
      expect(await timeline(p).getByText(FIRST).count()).toBe(0);
    }

    // The server holds the message and its two edits, each as ciphertext only.
    const held = await serverMessages(b);
    expect(held).toHaveLength(3);
    for (const m of held) {
      expect(m.text).toBeNull();
      expect(m.ciphertext).toBeTruthy();
    }
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });

  it('deletes the edits with their message', async () => {
    const a = alice.page;
    await message(a, AGAIN).hover();
    await message(a, AGAIN).getByRole('button', { name: 'Delete' }).click();
    await a.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await expect
      .poll(() => timeline(bob.page).getByText(AGAIN).count(), { timeout: 30_000 })
      .toBe(0);
    await expect
      .poll(async () => (await serverMessages(bob.page)).filter((m) => !m.isDeleted).length, {
        timeout: 30_000,
      })
      .toBe(0);
    // Each browser that read the edits shows one deleted message, not three.
    for (const p of [a, bob.page]) {
      await p.reload();
      await timeline(p).getByText('This message was deleted.').first().waitFor({ timeout: 30_000 });
      expect(await timeline(p).getByText('This message was deleted.').count()).toBe(1);
      expect(await timeline(p).getByText(AGAIN).count()).toBe(0);
    }
  });

  it('let no text of the message or its edits leave a browser in the clear', () => {
    expect(wire.length).toBeGreaterThan(0);
    for (const text of [FIRST, EDITED, AGAIN]) {
      expect(wire.filter((w) => w.includes(text))).toEqual([]);
    }
  });
});
