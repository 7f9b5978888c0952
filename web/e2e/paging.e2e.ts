/// <reference lib="dom" />
// Lists longer than one page (docs/api.md, Pagination) in the app: the sidebar reads every page
// of a workspace's channels, and a channel's members and the invites, reports, blocked people
// and sessions lists show a page and then more on request. Set up through the API (ApiSession), checked in Chromium.
import type { Browser, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { ApiSession, personPage, serveThisFile, signIn, type TestServer } from './harness.js';

const PASSWORD = 'dana-password-1';
/** More than the 100 channels of the sidebar's first page, with #general and #random. */
const CHANNELS = 102;
/** More than the 20 invites, reports, blocked people and sessions the app shows at first. */
const MORE = 22;

let server: TestServer;
let browser: Browser;
let page: Page;
let problems: string[];

serveThisFile(
  async (s) => {
    ({ server, browser } = s);
    const dana = await ApiSession.signUp(server, 'dana', PASSWORD);
    const { createWorkspace: ws } = await dana.gql<{ createWorkspace: { id: string } }>(
      'mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { id } }',
      { i: { name: 'Crowded' } },
    );
    for (let i = 0; i < CHANNELS; i++) {
      await dana.gql('mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }', {
        i: { serverId: ws.id, name: `ch-${String(i).padStart(3, '0')}` },
      });
    }
    const tokens: string[] = [];
    for (let i = 0; i < MORE; i++) {
      const { createWorkspaceInvite: inv } = await dana.gql<{
        createWorkspaceInvite: { token: string };
      }>(
        'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token } }',
        {
          i: { serverId: ws.id },
        },
      );
      tokens.push(inv.token);
      const pest = await ApiSession.signUp(server, `pest-${i}`, 'pest-password-1');
      await dana.gql('mutation($u: ID!) { blockUser(userId: $u) }', { u: pest.userId });
    }
    // MORE reports of messages in #general, from three members (each may report 10 an hour).
    const { channels } = await dana.gql<{ channels: Array<{ id: string; name: string }> }>(
      'query($s: ID!) { channels(serverId: $s) { id name } }',
      { s: ws.id },
    );
    const general = channels.find((c) => c.name === 'general')!.id;
    const reporters: ApiSession[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await ApiSession.signUp(server, `reporter-${i}`, 'reporter-password-1');
      await r.gql('mutation($t: String!) { joinWorkspace(token: $t) { id } }', { t: tokens[i] });
      reporters.push(r);
    }
    // #general of MORE members: dana, the three reporters and these.
    for (let i = 0; i < MORE - 4; i++) {
      const m = await ApiSession.signUp(server, `member-${String(i).padStart(2, '0')}`, PASSWORD);
      await m.gql('mutation($t: String!) { joinWorkspace(token: $t) { id } }', { t: tokens[3] });
    }
    for (let i = 0; i < MORE; i++) {
      const { sendMessage: m } = await dana.gql<{ sendMessage: { id: string } }>(
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
        { i: { conversationId: general, text: `reported ${String(i).padStart(2, '0')}` } },
      );
      await reporters[i % 3]!.gql(
        'mutation($id: ID!) { reportMessage(messageId: $id, category: SPAM) { id } }',
        { id: m.id },
      );
    }
    // MORE other sessions of dana's, besides the browser's.
    for (let i = 0; i < MORE; i++) await ApiSession.signIn(server, 'dana', PASSWORD);
    ({ page, problems } = await personPage(browser, server.url));
    await signIn(page, 'dana', PASSWORD);
    await page.getByRole('navigation', { name: 'Workspaces' }).waitFor();
  },
  // Accounts made through the API: no proof of work, no device keys.
  { env: { SVC_REGISTRATION_POW_BITS: '0', SVC_SIGNUP_REQUIRE_KEYS: 'false' } },
);

describe('lists longer than a page', () => {
  it('shows every channel in the sidebar, past the first page', async () => {
    await page.getByRole('button', { name: /^Crowded/ }).click();
    const sidebar = page.getByRole('navigation', { name: 'Conversations in Crowded' });
    // The newest channels come on the second page; the sidebar sorts by name.
    await sidebar.getByRole('link', { name: /ch-101/ }).waitFor();
    await expect(sidebar.getByRole('link', { name: /^#?ch-\d{3}/ }).count()).resolves.toBe(
      CHANNELS,
    );
  });

  it('shows a channel’s members a page at a time, in the order they joined', async () => {
    const sidebar = page.getByRole('navigation', { name: 'Conversations in Crowded' });
    await sidebar.getByRole('link', { name: /general/ }).click();
    await page.getByRole('button', { name: `Members (${MORE})` }).click();
    const members = page.locator('ul.members > li');
    await members.nth(19).waitFor();
    expect(await members.count()).toBe(20);
    await expect(members.first().textContent()).resolves.toContain('dana');
    await page.getByRole('button', { name: 'Show more members' }).click();
    await members.nth(MORE - 1).waitFor();
    expect(await members.count()).toBe(MORE);
    await expect(members.last().textContent()).resolves.toContain(`member-${MORE - 5}`);
    await expect(page.getByRole('button', { name: 'Show more members' }).count()).resolves.toBe(0);
    await page.getByRole('button', { name: `Members (${MORE})` }).click();
  });

  it('shows the invites a page at a time', async () => {
    await page.getByRole('button', { name: 'Invite people' }).click();
    const invites = page.locator('ul.invites > li');
    await invites.nth(19).waitFor();
    expect(await invites.count()).toBe(20);
    await page.getByRole('button', { name: 'Show more invites' }).click();
    await invites.nth(MORE - 1).waitFor();
    expect(await invites.count()).toBe(MORE);
    await page.keyboard.press('Escape');
  });

  it('shows the open reports a page at a time, oldest first', async () => {
    await page.getByRole('button', { name: 'Invite people' }).click();
    await page.getByRole('tab', { name: 'Reports' }).click();
    const reports = page.locator('ul.reports > li');
    await reports.nth(19).waitFor();
    expect(await reports.count()).toBe(20);
    await expect(reports.first().textContent()).resolves.toContain('reported 00');
    await page.getByRole('button', { name: 'Show more reports' }).click();
    await reports.nth(MORE - 1).waitFor();
    expect(await reports.count()).toBe(MORE);
    await expect(reports.last().textContent()).resolves.toContain(`reported ${MORE - 1}`);
    await page.keyboard.press('Escape');
  });

  it('shows the blocked people a page at a time', async () => {
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('link', { name: 'Messages and privacy' }).click();
    const blocked = page.locator('ul.blocked-people > li');
    await blocked.nth(19).waitFor();
    expect(await blocked.count()).toBe(20);
    // Most recent first: the last one blocked heads the list, the first comes with the second page.
    await expect(blocked.first().textContent()).resolves.toContain(`pest-${MORE - 1}`);
    await page.getByRole('button', { name: 'Show more blocked people' }).click();
    await blocked.nth(MORE - 1).waitFor();
    expect(await blocked.count()).toBe(MORE);
    await expect(blocked.last().textContent()).resolves.toContain('pest-0');
  });

  it('shows the sessions a page at a time, newest first', async () => {
    await page.getByRole('link', { name: 'Sessions' }).click();
    const sessions = page.locator('ul.sessions > li');
    await sessions.nth(19).waitFor();
    expect(await sessions.count()).toBe(20);
    // The browser's own session is the newest.
    await expect(sessions.first().textContent()).resolves.toContain('This session');
    await page.getByRole('button', { name: 'Show more sessions' }).click();
    // The first one signed in (the API's, while setting up) and the MORE after it.
    await sessions.nth(MORE + 1).waitFor();
    expect(await sessions.count()).toBe(MORE + 2);
    expect(problems).toEqual([]);
  });
});
