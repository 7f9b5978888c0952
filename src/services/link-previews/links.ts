import { linkifyit } from 'linkify-it';

/** Links previewed per message (contract: Link preview limits). */
export const LINKS_PER_MESSAGE = 5;

const linkify = linkifyit();

/**
 * The message's first distinct http(s) links, at most five, in text order, found by linkify-it
 * (`example.com/x` counts, as in Slack, and is fetched as `http://`). Credentials and fragments
 * are dropped: they are not sent, and two links differing only there are one page.
 */
export function linksIn(text: string | null): string[] {
  if (!text) return [];
  const out: string[] = [];
  for (const match of linkify.match(text) ?? []) {
    let url: URL;
    try {
      url = new URL(match.url);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    url.username = '';
    url.password = '';
    url.hash = '';
    const href = url.toString();
    if (!out.includes(href)) out.push(href);
    if (out.length === LINKS_PER_MESSAGE) break;
  }
  return out;
}
