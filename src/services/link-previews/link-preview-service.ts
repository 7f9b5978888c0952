import type { Logger } from 'pino';

import type { Db, Tx } from '../../db/database.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { LinkPreviewTable } from '../../db/tables/link-previews.js';
import type { LinkPreviewPayload } from '../../events/catalog.js';
import type { Clock } from '../../lib/clock.js';
import { Lru } from '../../lib/lru.js';
import type { RequestLoad } from '../../lib/request-load.js';
import type { SafeFetch } from '../../net/safe-fetch.js';
import type { MessageService, MessageRemovalHook } from '../messages/index.js';

import { BatchedWrites } from './batched-writes.js';
import { previewOf, type PreviewData } from './html-meta.js';
import { linksIn } from './links.js';
import { deletePreviews, previewsOf, replacePreviews } from './queries.js';
import { Slots } from './slots.js';

/** How long a URL's result (a preview, or none) is reused: ten minutes. */
export const CACHE_TTL_MS = 10 * 60 * 1000;
/** URLs whose result is kept at once. */
export const CACHE_ENTRIES = 2000;
/** How long finished previews wait to be stored together. */
export const WRITE_BATCH_MS = 100;
/**
 * The share of the event loop that requests may take before fetches give way to them: at or
 * above it, no new fetch starts (lib/request-load.ts measures it). At 0.9 the start of a burst,
 * while the loop fills up, let 10-30 fetches of the `previews` bench through; at 0.8, 0-12.
 */
export const GIVE_WAY_SHARE = 0.8;
/** How long a fetch waits for a slot before it is dropped (contract: five seconds). */
export const SLOT_WAIT_MS = 5000;

export interface LinkPreviewDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  messages: MessageService;
  fetcher: SafeFetch;
  /** Whether `link_previews` is on; while off nothing is fetched and nothing is served. */
  enabled: boolean;
  /** SVC_LINK_PREVIEW_CONCURRENCY. */
  concurrency: number;
  /** How busy requests keep the process: fetches give way to them. */
  load: RequestLoad;
  /** The slot wait (tests shorten it); default five seconds. */
  slotWaitMs?: number;
}

/** A stored preview as the API shows it. */
export type LinkPreviewView = LinkPreviewPayload;

/**
 * Link previews (docs/link-previews.md). After a message with links commits, its first five
 * distinct http(s) links are fetched in the background through `SafeFetch`, at most
 * `concurrency` fetches at once per process, and none starts while requests keep the event loop
 * busy (they come first: a preview may wait, an answer should not); the previews are stored
 * beside the message and announced as `MessageUpdated`. Results are cached per URL for ten
 * minutes and concurrent requests for one URL share one fetch. An edit that changes the links
 * refreshes the previews (as Slack does); removal drops them.
 */
export class LinkPreviewService {
  private readonly slots: Slots;
  private readonly cache = new Lru<string, { at: number; preview: PreviewData | null }>(
    CACHE_ENTRIES,
  );
  private readonly inFlight = new Map<string, Promise<PreviewData | null>>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;
  /** Aborts the fetches under way at shutdown. */
  private readonly stopping = new AbortController();

  /** Finished previews, stored together every WRITE_BATCH_MS (one commit for many messages). */
  private readonly writes: BatchedWrites<{
    message: MessageTable;
    rows: LinkPreviewTable[];
    now: number;
  }>;

  constructor(private readonly deps: LinkPreviewDeps) {
    // Requests come first: while they keep the event loop busy, no new fetch starts.
    this.slots = new Slots(
      deps.concurrency,
      deps.slotWaitMs ?? SLOT_WAIT_MS,
      () => deps.load.share() < GIVE_WAY_SHARE,
    );
    this.writes = new BatchedWrites(deps.db, (tx, item) => this.store(tx, item), WRITE_BATCH_MS);
  }

  /** Whether the feature is on: the root registers the hooks below only then (wiring.ts). */
  get enabled(): boolean {
    return this.deps.enabled;
  }

  /** After a message's commit: previews its links. */
  readonly messageCreated = (m: MessageTable): void => this.schedule(m, false);

  /** After an edit's commit: links added are previewed, links gone lose their preview. */
  readonly messageEdited = (m: MessageTable): void => this.schedule(m, true);

  /** The stored previews of these messages, in link order; empty lists while the feature is off. */
  async previewsFor(messageIds: readonly string[]): Promise<Map<string, LinkPreviewView[]>> {
    const out = new Map<string, LinkPreviewView[]>();
    if (!this.deps.enabled) return out;
    for (const row of await previewsOf(this.deps.db.kysely, messageIds)) {
      const list = out.get(row.messageId) ?? [];
      list.push(toView(row));
      out.set(row.messageId, list);
    }
    return out;
  }

  /** The removal hook: a removed message's previews go with it (removal.ts). */
  readonly onRemove: MessageRemovalHook = async (tx, removal) => {
    await deletePreviews(
      tx.db,
      removal.messages.map((m) => m.id),
    );
  };

  /** Resolves when the background work started so far has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Stops taking work, aborts the fetches under way and waits for the rest to settle. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopping.abort();
    await this.idle();
  }

  private schedule(message: MessageTable, edited: boolean): void {
    if (this.closed || message.text === null) return;
    const links = linksIn(message.text);
    if (!edited && links.length === 0) return;
    const work = this.previewMessage(message, links)
      .catch((err: unknown) =>
        this.deps.log.error({ err, messageId: message.id }, 'link previews failed'),
      )
      .finally(() => this.running.delete(work));
    this.running.add(work);
  }

  private async previewMessage(message: MessageTable, links: readonly string[]): Promise<void> {
    const previews = await Promise.all(links.map((url) => this.preview(url)));
    if (this.stopping.signal.aborted) return;
    const now = this.deps.clock.now().getTime();
    const rows: LinkPreviewTable[] = [];
    links.forEach((url, i) => {
      const p = previews[i];
      if (p) rows.push({ messageId: message.id, position: rows.length, url, ...p, fetchedAt: now });
    });
    await this.writes.add({ message, rows, now });
  }

  /** Stores a message's previews and announces them, unless they are what is stored already. */
  private async store(
    tx: Tx,
    { message, rows, now }: { message: MessageTable; rows: LinkPreviewTable[]; now: number },
  ): Promise<void> {
    const stored = await previewsOf(tx.db, [message.id]);
    const views = rows.map(toView);
    if (JSON.stringify(stored.map(toView)) === JSON.stringify(views)) return;
    // Written only over the text these links came from: a later edit has its own run.
    const current = await this.deps.messages.announceUpdate(
      tx,
      message.id,
      now,
      { linkPreviews: views },
      (m) => m.text === message.text,
    );
    if (current) await replacePreviews(tx.db, message.id, rows);
  }

  /** One URL's preview: from the cache, from a fetch under way, or fetched in a slot. */
  private preview(url: string): Promise<PreviewData | null> {
    const now = this.deps.clock.now().getTime();
    const hit = this.cache.get(url);
    if (hit && now - hit.at < CACHE_TTL_MS) return Promise.resolve(hit.preview);
    const running = this.inFlight.get(url);
    if (running) return running;
    const fetching = this.fetchPreview(url).finally(() => this.inFlight.delete(url));
    this.inFlight.set(url, fetching);
    return fetching;
  }

  private async fetchPreview(url: string): Promise<PreviewData | null> {
    const release = await this.slots.acquire();
    if (!release) {
      this.deps.log.warn(
        { url: redact(url) },
        'link preview dropped: no fetch slot free within five seconds',
      );
      return null;
    }
    let preview: PreviewData | null = null;
    try {
      const res = await this.deps.fetcher.get(url, {
        accept: 'text/html,application/xhtml+xml,image/*;q=0.8',
        signal: this.stopping.signal,
      });
      if (!res.ok) {
        this.deps.log.debug(
          { url: redact(url), reason: res.reason, detail: res.detail },
          'link preview not fetched',
        );
      } else if (res.status >= 200 && res.status < 300) {
        preview = previewOf(res);
      }
    } finally {
      release();
    }
    // A fetch cut short by shutdown says nothing about the URL.
    if (!this.stopping.signal.aborted) {
      this.cache.set(url, { at: this.deps.clock.now().getTime(), preview });
    }
    return preview;
  }
}

function toView(
  row: Omit<LinkPreviewTable, 'messageId' | 'position' | 'fetchedAt'>,
): LinkPreviewView {
  return {
    url: row.url,
    kind: row.kind === 'image' ? 'image' : 'page',
    title: row.title,
    description: row.description,
    imageUrl: row.imageUrl,
    siteName: row.siteName,
    mimeType: row.mimeType,
    size: row.size === null ? null : Number(row.size),
  };
}

/** A URL for a log line: origin and path, no query (it may carry tokens). */
function redact(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(invalid)';
  }
}
