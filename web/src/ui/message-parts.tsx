import type { ComponentChildren } from 'preact';

import type { Message } from '../api/types.ts';

/**
 * What a message shows under its text besides reactions: one renderer per optional feature
 * (link previews here; attachments, custom emoji and the like register theirs as they land).
 * Each answers null when it has nothing for the message.
 */
export type PartRenderer = (m: Message) => ComponentChildren | null;

const renderers: PartRenderer[] = [];

export function registerPart(r: PartRenderer): void {
  renderers.push(r);
}

export function messageParts(m: Message): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  for (const r of renderers) {
    const part = r(m);
    if (part) out.push(part);
  }
  return out;
}

// Link previews (the `link_previews` feature; an empty list while it is off). Images are shown
// only from this server: the page's policy loads nothing from other hosts, so a link never
// tells a third party who read it.
registerPart((m) =>
  m.linkPreviews.length ? (
    <ul class="plain previews" aria-label="Link previews">
      {m.linkPreviews.map((p) => (
        <li key={p.url} class="preview">
          {p.imageUrl?.startsWith('/') && <img src={p.imageUrl} alt="" loading="lazy" />}
          <div>
            {p.siteName && (
              <span class="muted small" dir="auto">
                {p.siteName}
              </span>
            )}
            <a href={p.url} target="_blank" rel="noopener noreferrer nofollow ugc" dir="auto">
              {p.title ?? p.url}
            </a>
            {p.description && <p dir="auto">{p.description}</p>}
          </div>
        </li>
      ))}
    </ul>
  ) : null,
);
