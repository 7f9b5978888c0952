/// <reference lib="dom" />
// A file in an encrypted conversation (docs/web-client-encrypted.md, "Attachments"): encrypted
// in the sender's browser before upload, its key inside the MLS message, downloaded and
// decrypted by the other member. The blob the server stored holds neither the file's bytes nor
// its name, and no request carried them. Reported, its text and file reach the operator, who
// opens the file with the key the reporter revealed.
import fs from 'node:fs';
import path from 'node:path';

import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

import { acceptInvitation, pageGql, sendSecret, startEncryptedGroup } from './encrypted-helpers.js';
import {
  composer,
  createInviteLink,
  joinByInvite,
  personPage,
  serveThisFile,
  signIn,
  signUpWithWorkspace,
  timeline,
  type Person,
  type TestServer,
} from './harness.js';

let server: TestServer;
let browser: Browser;
let alice: Person;
let bob: Person;

const FILE_NAME = 'harbour-plan-7f3k.txt';
const FILE_TEXT = 'Harbour plan: the second boat waits behind the grey warehouse.\n';
const MESSAGE = 'The plan is attached, read it tonight';
const IMAGE_NAME = 'pier-view-2q9d.png';

/** Every request body the pages sent, as text (a multipart body too). */
const sent: string[] = [];
function record(context: BrowserContext): void {
  context.on('request', (r) => {
    const body = r.postDataBuffer();
    sent.push(`${r.url()} ${body ? body.toString('latin1') : ''}`);
  });
}

serveThisFile(
  async (s) => {
    ({ server, browser } = s);
    server.cli(['account', 'create', 'olga', '--password-stdin'], 'olga-password-1\n');
    server.cli(['operator', 'grant', 'olga']);
    alice = await personPage(browser, server.url);
    bob = await personPage(browser, server.url);
    record(alice.context);
    record(bob.context);
  },
  { env: { SVC_SIGNUP_REQUIRE_KEYS: 'false' } },
);

function blobs(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'tmp') out.push(...blobs(p));
    } else out.push(p);
  }
  return out;
}

async function attach(p: Page): Promise<void> {
  await p.locator('[data-testid=attach-input]').setInputFiles({
    name: FILE_NAME,
    mimeType: 'text/plain',
    buffer: Buffer.from(FILE_TEXT),
  });
  await p.locator('.pending-files .pending.ready').waitFor({ timeout: 30_000 });
}

describe('a file in an encrypted conversation', () => {
  it('is encrypted before upload and decrypted by the other member', async () => {
    await signUpWithWorkspace(alice.page, 'alice', 'Alice', 'Team');
    const invite = await createInviteLink(alice.page);
    await joinByInvite(bob.page, invite, 'bob', 'Bob');
    await startEncryptedGroup(alice.page, [/Bob/]);
    await acceptInvitation(bob.page);
    // A first message, so both browsers are in the group before the file goes.
    await sendSecret(alice.page, 'A file follows');
    await timeline(bob.page).getByText('A file follows').waitFor({ timeout: 30_000 });

    const a = alice.page;
    await attach(a);
    await composer(a).fill(MESSAGE);
    await composer(a).press('Enter');
    await timeline(a).getByText(MESSAGE, { exact: true }).waitFor({ timeout: 30_000 });
    await timeline(a)
      .getByRole('button', { name: `Download ${FILE_NAME}, encrypted` })
      .waitFor({ timeout: 30_000 });

    const b = bob.page;
    await timeline(b).getByText(MESSAGE, { exact: true }).waitFor({ timeout: 30_000 });
    const button = timeline(b).getByRole('button', { name: `Download ${FILE_NAME}, encrypted` });
    await button.waitFor({ timeout: 30_000 });
    // Finalizing follows the message: a click before it says so; the file is there after.
    await expect
      .poll(
        async () => {
          const got = b.waitForEvent('download', { timeout: 5_000 }).catch(() => null);
          await button.click();
          const d = await got;
          return d ? fs.readFileSync((await d.path())!, 'utf8') : null;
        },
        { timeout: 30_000 },
      )
      .toBe(FILE_TEXT);
    expect(alice.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  });

  it('shows an image’s small preview from the message, before anything is downloaded', async () => {
    const downloads = () => sent.filter((s) => s.includes('/download')).length;
    const before = downloads();
    const a = alice.page;
    await a.locator('[data-testid=attach-input]').setInputFiles({
      name: IMAGE_NAME,
      mimeType: 'image/png',
      buffer: await sharp({
        create: { width: 400, height: 300, channels: 3, background: '#3366cc' },
      })
        .png()
        .toBuffer(),
    });
    await a.locator('.pending-files .pending.ready').waitFor({ timeout: 30_000 });
    await composer(a).fill('The view from the pier');
    await composer(a).press('Enter');

    const preview = timeline(bob.page).getByRole('img', {
      name: `${IMAGE_NAME} (preview: download to see it whole)`,
    });
    await preview.waitFor({ timeout: 30_000 });
    const seen = await preview.evaluate((img: HTMLImageElement) => {
      const canvas = document.createElement('canvas');
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const ctx = canvas.getContext('2d')!;
      ctx.drawImage(img, 0, 0);
      const [r, g, b] = ctx.getImageData(32, 24, 1, 1).data;
      return { src: img.src, width: img.naturalWidth, height: img.naturalHeight, rgb: [r, g, b] };
    });
    // A 64 px JPEG of the picture, its colour kept, carried inside the encrypted message.
    expect(seen.src).toMatch(/^data:image\/jpeg;base64,/);
    expect([seen.width, seen.height]).toEqual([64, 48]);
    const [r, g, b] = seen.rgb as [number, number, number];
    expect(Math.abs(r - 0x33) + Math.abs(g - 0x66) + Math.abs(b - 0xcc)).toBeLessThan(30);
    expect(downloads()).toBe(before);
    expect(sent.filter((s) => s.includes(seen.src.slice(30, 130)))).toEqual([]);
    expect(bob.problems).toEqual([]);
  });

  it('left nothing of the file in the clear on the server or the wire', () => {
    const stored = blobs(path.join(server.dataDir, 'blobs'));
    expect(stored.length).toBeGreaterThan(0);
    const needle = Buffer.from(FILE_TEXT.trim());
    for (const f of stored) {
      const bytes = fs.readFileSync(f);
      expect(bytes.includes(needle), `${f} holds the file's text`).toBe(false);
      expect(bytes.includes(Buffer.from(FILE_NAME))).toBe(false);
    }
    // The stored blob is the file's size plus the IV and the tag.
    const sizes = stored.map((f) => fs.statSync(f).size);
    expect(sizes).toContain(Buffer.byteLength(FILE_TEXT) + 28);
    for (const text of [FILE_TEXT.trim(), FILE_NAME, MESSAGE]) {
      expect(sent.filter((s) => s.includes(text))).toEqual([]);
    }
  });

  // Runs after the wire was checked: a report sends the text to the moderators, by design.
  it('is reported with its proof, and the operator reads the text and opens the file', async () => {
    const b = bob.page;
    const msg = timeline(b).locator('article.msg', { hasText: MESSAGE });
    await msg.hover();
    await msg.getByRole('button', { name: 'Report' }).click();
    const dialog = b.getByRole('dialog', { name: 'Report this message' });
    await dialog.getByText(/end-to-end encrypted: reporting sends/).waitFor();
    await dialog.getByRole('radio', { name: 'Harassment' }).check();
    await dialog.getByRole('button', { name: 'Report', exact: true }).click();
    await b.getByText(/proven to be what its sender wrote/).waitFor({ timeout: 30_000 });

    // Direct and group conversations live in the direct space: their reports go to operators.
    const olga = await personPage(browser, server.url);
    const o = olga.page;
    await signIn(o, 'olga', 'olga-password-1');
    await o.getByRole('button', { name: 'Server administration' }).click();
    const report = o.locator('.reports li', { hasText: MESSAGE });
    await report.waitFor({ timeout: 30_000 });
    await report.getByText(/End-to-end encrypted: revealed by the reporter/).waitFor();
    // The text, not the body with its keys.
    expect(await report.locator('blockquote').innerText()).toBe(MESSAGE);
    const button = report.getByRole('button', { name: `Download ${FILE_NAME}, encrypted` });
    const got = o.waitForEvent('download', { timeout: 30_000 });
    await button.click();
    const d = await got;
    expect(d.suggestedFilename()).toBe(FILE_NAME);
    expect(fs.readFileSync((await d.path())!, 'utf8')).toBe(FILE_TEXT);

    // What the server holds: the verified body, whose file key opens the report's blob.
    const r = (
      await pageGql<{
        instanceReports: Array<{
          id: string;
          snapshot: { text: string; encrypted: boolean; frankingVerified: boolean };
        }>;
      }>(o, `{ instanceReports { id snapshot { text encrypted frankingVerified } } }`)
    ).instanceReports.find((x) => x.snapshot.encrypted)!;
    expect(r.snapshot.frankingVerified).toBe(true);
    const body = JSON.parse(r.snapshot.text) as {
      text: string;
      files: Array<{ name: string; sha256: string; key: string }>;
    };
    expect(body.text).toBe(MESSAGE);
    expect(body.files.map((f) => f.name)).toEqual([FILE_NAME]);
    const blobPath = `/api/reports/${r.id}/attachments/${body.files[0]!.sha256}`;
    const status = (p: typeof o) =>
      p.evaluate(async (u) => (await fetch(u, { credentials: 'same-origin' })).status, blobPath);
    expect(await status(o)).toBe(200);
    // The reporter is not among those who handle the report.
    expect(await status(b)).not.toBe(200);
    expect(olga.problems).toEqual([]);
    await olga.context.close();
  });
});
