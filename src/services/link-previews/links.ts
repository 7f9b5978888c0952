import { linkifyit } from 'linkify-it';

/** Links previewed per message (contract: Link preview limits). */
export const LINKS_PER_MESSAGE = 5;

const linkify = linkifyit({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });

/**
 * The message's first distinct http(s) links, at most five, in text order, found by linkify-it.
 * Only links written with `http://` or `https://` count (as in Discord): a bare `file.py` or
 * `example.com` is not fetched, since linkify's country-code domains would turn file names into
 * requests. Credentials and fragments are dropped: they are not sent, and two links differing
 * only there are one page.
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
    // Each setter serializes the URL again: only for the parts that are there.
    if (url.username) url.username = '';
    if (url.password) url.password = '';
    if (url.href.includes('#')) url.hash = '';
    const href = url.toString();
    if (!out.includes(href)) out.push(href);
    if (out.length === LINKS_PER_MESSAGE) break;
  }
  return out;
}
