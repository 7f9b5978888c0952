import { computed, signal } from '@preact/signals';

import { gql } from '../api/graphql.ts';
import { MESSAGES, THREAD } from '../api/queries.ts';
import type { Message, MessagePage } from '../api/types.ts';

import { aboutToRead, readablePage } from '../e2ee/glue.ts';

import { conversations, rememberUsers } from './store.ts';

/** A page with its encrypted messages decrypted on this browser (others as they are). */
async function readable(page: MessagePage): Promise<MessagePage> {
  // A page of deleted messages only is still one of an encrypted conversation (deleted edits
  // are hidden there).
  const first =
    page.items.find((m) => m.ciphertext) ??
    page.items.find((m) => m.isDeleted && conversations.peek()[m.conversationId]?.encrypted);
  if (!first) return page;
  return readablePage(first.conversationId, page);
}

/** Messages a page holds; the server's default. */
export const PAGE_SIZE = 50;
/**
 * Pages kept at once. Scrolling further loads the next page and drops the farthest one, so a
 * channel of any length keeps at most this many pages in memory and in the page.
 */
export const MAX_PAGES = 6;

interface Page {
  items: Message[];
  /** Pass as `before` for the messages older than this page; null when there are none. */
  older: string | null;
  /** Pass as `after` for the messages newer than this page. */
  newer: string | null;
}

type Fetch = (args: { before?: string; after?: string }) => Promise<MessagePage>;

/**
 * A window onto a conversation's messages (or a thread's replies), oldest first, paged with the
 * API's cursors in both directions. `live` is true while the window reaches the newest message:
 * only then do new messages from live events join it.
 */
export class Timeline {
  readonly pages = signal<Page[]>([]);
  readonly items = computed(() => this.pages.value.flatMap((p) => p.items));
  readonly live = signal(true);
  readonly loading = signal<'initial' | 'older' | 'newer' | null>(null);
  readonly error = signal<unknown>(null);
  /** True once the first page arrived (a failed first load leaves it false). */
  readonly ready = signal(false);
  /** Set when events may have been missed (a reconnect): the next view reloads. */
  stale = false;

  constructor(
    readonly id: string,
    private readonly fetchPage: Fetch,
  ) {}

  get atStart(): boolean {
    const first = this.pages.value[0];
    return first !== undefined && first.older === null;
  }

  private async run(kind: 'initial' | 'older' | 'newer', f: () => Promise<void>): Promise<void> {
    if (this.loading.value) return;
    this.loading.value = kind;
    this.error.value = null;
    try {
      await f();
    } catch (err) {
      this.error.value = err;
    } finally {
      this.loading.value = null;
    }
  }

  /** Loads the newest page, replacing whatever the window held. */
  open(): Promise<void> {
    this.stale = false;
    return this.run('initial', async () => {
      const page = await this.fetchPage({});
      rememberUsers(page.items.map((m) => m.author));
      this.pages.value = [{ items: page.items, older: page.nextCursor, newer: page.prevCursor }];
      this.live.value = true;
      this.ready.value = true;
    }).then(() => {
      const arrived = this.arrivedWhileOpening;
      this.arrivedWhileOpening = [];
      for (const m of arrived) this.add(m);
    });
  }

  loadOlder(): Promise<void> {
    const first = this.pages.value[0];
    if (!first?.older) return Promise.resolve();
    const before = first.older;
    return this.run('older', async () => {
      const page = await this.fetchPage({ before });
      rememberUsers(page.items.map((m) => m.author));
      const next = [
        { items: page.items, older: page.nextCursor, newer: page.prevCursor },
        ...this.pages.value,
      ];
      if (next.length > MAX_PAGES) {
        next.pop();
        this.live.value = false;
      }
      this.pages.value = next;
    });
  }

  loadNewer(): Promise<void> {
    const last = this.pages.value[this.pages.value.length - 1];
    if (this.live.value || !last?.newer) return Promise.resolve();
    const after = last.newer;
    return this.run('newer', async () => {
      const page = await this.fetchPage({ after });
      rememberUsers(page.items.map((m) => m.author));
      const next = [
        ...this.pages.value,
        { items: page.items, older: page.prevCursor, newer: page.nextCursor },
      ];
      if (next.length > MAX_PAGES) next.shift();
      this.pages.value = next;
      if (!page.hasMore) this.live.value = true;
    });
  }

  /**
   * Messages that arrived while the first page was on its way: that page may have been read
   * before they were stored, so they are added once it is in.
   */
  private arrivedWhileOpening: Message[] = [];

  /** A new message from a live event or from our own send; ignored while not at the newest. */
  add(message: Message): void {
    if (this.loading.value === 'initial') {
      this.arrivedWhileOpening.push(message);
      return;
    }
    if (!this.live.value || !this.ready.value) return;
    const pages = this.pages.value;
    if (pages.some((p) => p.items.some((m) => m.id === message.id))) {
      this.update(message.id, () => message);
      return;
    }
    const last = pages[pages.length - 1];
    if (!last) return;
    const items = [...last.items, message].sort(byTime);
    this.pages.value = [...pages.slice(0, -1), { ...last, items }];
  }

  /** Changes one message wherever it is in the window. */
  update(id: string, f: (m: Message) => Message): void {
    let hit = false;
    const pages = this.pages.value.map((p) => {
      const i = p.items.findIndex((m) => m.id === id);
      if (i < 0) return p;
      hit = true;
      const items = p.items.slice();
      items[i] = f(items[i] as Message);
      return { ...p, items };
    });
    if (hit) this.pages.value = pages;
  }

  find(id: string): Message | undefined {
    for (const p of this.pages.value) {
      const m = p.items.find((x) => x.id === id);
      if (m) return m;
    }
    return undefined;
  }
}

function byTime(a: Message, b: Message): number {
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1;
}

// Recently opened timelines stay in memory, so going back to a conversation is instant and
// live events keep them current.
const KEEP = 12;
const cache = new Map<string, Timeline>();

function remember(key: string, make: () => Timeline): Timeline {
  let t = cache.get(key);
  if (t) {
    cache.delete(key);
  } else {
    t = make();
  }
  cache.set(key, t);
  while (cache.size > KEEP) cache.delete(cache.keys().next().value as string);
  return t;
}

export function conversationTimeline(conversationId: string): Timeline {
  return remember(
    `c:${conversationId}`,
    () =>
      new Timeline(conversationId, async (args) => {
        aboutToRead(conversationId);
        const d = await gql<{ messages: MessagePage }>(MESSAGES, {
          id: conversationId,
          limit: PAGE_SIZE,
          ...args,
        });
        return readable(d.messages);
      }),
  );
}

export function threadTimeline(rootId: string): Timeline {
  return remember(
    `t:${rootId}`,
    () =>
      new Timeline(rootId, async (args) => {
        const d = await gql<{ threadReplies: MessagePage }>(THREAD, { id: rootId, ...args });
        return readable(d.threadReplies);
      }),
  );
}

/** The timelines in memory that show messages of this conversation (itself and its threads). */
export function timelinesOf(conversationId: string): Timeline[] {
  const out: Timeline[] = [];
  for (const t of cache.values()) {
    if (t.id === conversationId || t.items.peek()[0]?.conversationId === conversationId)
      out.push(t);
  }
  return out;
}

/** Changes one message wherever it is shown: its conversation, its threads, its own thread. */
export function updateShown(
  conversationId: string | null,
  id: string | null,
  f: (m: Message) => Message,
): void {
  if (!conversationId || !id) return;
  for (const t of timelinesOf(conversationId)) t.update(id, f);
  cachedThread(id)?.update(id, f);
}

export function cachedThread(rootId: string): Timeline | undefined {
  return cache.get(`t:${rootId}`);
}

export function cachedConversation(conversationId: string): Timeline | undefined {
  return cache.get(`c:${conversationId}`);
}

/** After a reconnect: every timeline reloads when next shown. */
export function markAllStale(): void {
  for (const t of cache.values()) t.stale = true;
}

export function forgetTimelines(): void {
  cache.clear();
}
