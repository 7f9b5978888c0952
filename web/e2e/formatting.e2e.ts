/// <reference lib="dom" />
// Chat markup in Chromium (issue 43, item 4): a message with bold, italic, strikethrough, code,
// a code block, a quote, a list and a link is drawn with those elements; HTML in a message stays
// text (nothing runs); the message box's shortcuts wrap the selection and the preview shows the
// message as it will look.
import { describe, expect, it } from 'vitest';

import { checkA11y } from './a11y.js';
import {
  composer,
  personPage,
  shot,
  signUpWithWorkspace,
  serveThisFile,
  timeline,
  type Person,
} from './harness.js';

let alice: Person;

serveThisFile(async ({ server, browser }) => {
  alice = await personPage(browser, server.url);
  await signUpWithWorkspace(alice.page, 'alice', 'Alice', 'Markup');
});

describe('message formatting', () => {
  it('draws the chat markup of a message', async () => {
    const p = alice.page;
    const text = [
      'Plan: **bold** and _italic_ and ~~gone~~ and `npm ci`',
      '```',
      'const x = <b>1</b>;',
      '```',
      '> a quoted line',
      '- first',
      '- second',
      'see [the docs](https://example.com/docs) or javascript:alert(1)',
    ].join('\n');
    await composer(p).fill(text);
    await composer(p).press('Enter');
    const msg = timeline(p).locator('article.msg', { hasText: 'Plan:' });
    await msg.waitFor();
    const body = msg.locator('.text');
    await body.locator('strong', { hasText: 'bold' }).waitFor();
    expect(await body.locator('em').textContent()).toBe('italic');
    expect(await body.locator('del').textContent()).toBe('gone');
    expect(await body.locator('p code').textContent()).toBe('npm ci');
    expect(await body.locator('pre code').textContent()).toBe('const x = <b>1</b>;');
    expect(await body.locator('pre b').count()).toBe(0);
    expect(await body.locator('blockquote').textContent()).toBe('a quoted line');
    expect(await body.locator('ul li').allTextContents()).toEqual(['first', 'second']);
    const link = body.getByRole('link', { name: 'the docs' });
    expect(await link.getAttribute('href')).toBe('https://example.com/docs');
    expect(await link.getAttribute('rel')).toContain('noopener');
    expect(await body.locator('a[href^="javascript"]').count()).toBe(0);
    await shot(p, '30-formatting');
    await checkA11y(p, 'formatted message');
  });

  it('keeps HTML in a message as text', async () => {
    const p = alice.page;
    const hostile = '<img src=x onerror="document.title=\'pwned\'"> <script>alert(1)</script>';
    await composer(p).fill(hostile);
    await composer(p).press('Enter');
    const msg = timeline(p).locator('article.msg', { hasText: '<script>alert(1)</script>' });
    await msg.waitFor();
    expect(await msg.locator('.text').textContent()).toBe(hostile);
    expect(await msg.locator('.text img, .text script').count()).toBe(0);
    expect(await p.title()).not.toContain('pwned');
    expect(alice.problems).toEqual([]);
  });

  it('wraps the selection with the shortcuts and previews the message', async () => {
    const p = alice.page;
    const box = composer(p);
    await box.fill('make this loud');
    await box.evaluate((el: HTMLTextAreaElement) => el.setSelectionRange(10, 14));
    await box.press('Control+b');
    expect(await box.inputValue()).toBe('make this **loud**');
    await box.press('End');
    await box.pressSequentially(' and ');
    await box.press('Control+e');
    await box.pressSequentially('code');
    expect(await box.inputValue()).toBe('make this **loud** and `code`');
    await p.getByRole('button', { name: 'Preview formatting' }).click();
    const preview = p.getByRole('region', { name: 'Preview of your message' });
    await preview.locator('strong', { hasText: 'loud' }).waitFor();
    expect(await preview.locator('code').textContent()).toBe('code');
    await checkA11y(p, 'message box with the preview');
    await box.press('Enter');
    await timeline(p).locator('article.msg strong', { hasText: 'loud' }).waitFor();
    expect(alice.problems).toEqual([]);
  });
});
