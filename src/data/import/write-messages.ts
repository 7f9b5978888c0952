import { v7 as uuidv7 } from 'uuid';

import type { Db, Executor } from '../../db/database.js';
import type { BlobStore } from '../../services/files/index.js';
import type { AttachmentTable } from '../../db/tables/attachments.js';
import type { MessageTable } from '../../db/tables/messages.js';
import { MAX_ATTACHMENTS_PER_MESSAGE, insertAttachment, type StoredUpload } from '../../services/attachments/index.js';
import { touchConversation } from '../../services/conversations/index.js';
import { insertMessages, insertPins, insertReactions, recountThreads, parseMentions } from '../../services/messages/index.js';
import { insertMessageTerms } from '../../services/search/index.js';

import { reactionEmoji } from './emoji.js';
import { importAttachment, type ImportedFile } from './files.js';
import type { ImportSource, SourceMessage } from './model.js';
import { mappedIds, recordMappings, relaxCommit } from './queries.js';
import type { ImportReport } from './report.js';
import type { TermAnalyzer } from './terms.js';

// Messages, a batch per transaction: the rows, their reactions, pins, search terms and
// import-map rows commit together, so a batch is there whole or not at all, and a second run
// skips what the map holds.

/** Where a conversation of the export went, and how to name it in the report. */
export interface ConversationTarget {
  id: string;
  workspaceId: string;
  label: string;
}

export interface MessageContext {
  db: Db;
  /** Where the files the export carries are stored. */
  blobs: BlobStore;
  /** The export, for the files it carries. */
  files: Pick<ImportSource, 'openFile'>;
  /** Works out the search terms of a batch's texts. */
  terms: TermAnalyzer;
  source: string;
  dryRun: boolean;
  report: ImportReport;
  conversations: ReadonlyMap<string, ConversationTarget>;
  /** Account ids and svc usernames by person key. */
  people: ReadonlyMap<string, { id: string; username: string }>;
  /** Creates accounts for authors and reactors the export did not list (in the transaction). */
  ensurePeople(db: Executor, keys: readonly string[]): Promise<void>;
  /** The newest message written per conversation id, for read markers. */
  newest: Map<string, { at: number; id: string }>;
}

const PERSON_TOKEN = /<@([^>\s]+)>/g;

/** The text with the export's person tokens (`<@key>`) as svc mentions (`@username`). */
function resolveText(text: string, people: MessageContext['people']): string {
  return text.replace(PERSON_TOKEN, (whole, key: string) => {
    const p = people.get(key);
    return p ? `@${p.username}` : whole;
  });
}

/** Writes one batch; messages imported before are skipped. */
export async function writeBatch(ctx: MessageContext, batch: readonly SourceMessage[]) {
  const kysely = ctx.db.kysely;
  const done = await mappedIds(
    kysely,
    ctx.source,
    'message',
    batch.map((m) => m.key),
  );
  ctx.report.existing.messages += done.size;
  const unique = new Set<string>();
  const todo = batch.filter((m) => {
    if (done.has(m.key) || !ctx.conversations.has(m.conversationKey)) return false;
    if (unique.has(m.key)) {
      bump(ctx.report, 'messages listed twice');
      return false;
    }
    unique.add(m.key);
    return true;
  });
  for (const m of batch) {
    if (!done.has(m.key) && !ctx.conversations.has(m.conversationKey)) {
      ctx.report.skipped['messages of a conversation not imported'] =
        (ctx.report.skipped['messages of a conversation not imported'] ?? 0) + 1;
    }
  }
  if (todo.length === 0) return;

  // Thread starts in this batch, else in the map (an earlier batch or run).
  const ids = new Map<string, string>();
  for (const m of todo) ids.set(m.key, uuidv7({ msecs: m.createdAt }));
  const outside = [
    ...new Set(todo.flatMap((m) => (m.threadKey && !ids.has(m.threadKey) ? [m.threadKey] : []))),
  ];
  const earlier = outside.length ? await mappedIds(kysely, ctx.source, 'message', outside) : null;

  // The files the export carries are stored before the transaction (a blob no row names is
  // swept later, should the batch not commit).
  const stored = new Map<string, ImportedFile[]>();
  for (const m of todo) {
    if (m.files.length === 0) continue;
    const out: ImportedFile[] = [];
    for (const [i, f] of m.files.entries()) {
      out.push(
        i < MAX_ATTACHMENTS_PER_MESSAGE
          ? await importAttachment(ctx.blobs, ctx.files, f, ctx.dryRun)
          : {
              ok: false,
              reason: `a message has at most ${MAX_ATTACHMENTS_PER_MESSAGE} attachments`,
            },
      );
    }
    stored.set(m.key, out);
  }

  const write = async (db: Executor) => {
    const unknown = new Set<string>();
    for (const m of todo) {
      unknown.add(m.authorKey);
      for (const r of m.reactions) unknown.add(r.personKey);
      if (m.pin) unknown.add(m.pin.personKey);
    }
    await ctx.ensurePeople(
      db,
      [...unknown].filter((k) => !ctx.people.has(k)),
    );

    const rows: MessageTable[] = [];
    const byId = new Map<string, MessageTable>();
    const roots = new Set<string>();
    const reactions = new Map<
      string,
      { messageId: string; accountId: string; emoji: string; createdAt: number }
    >();
    const pins: {
      conversationId: string;
      messageId: string;
      pinnedBy: string;
      pinnedAt: number;
    }[] = [];
    const attachments: AttachmentTable[] = [];
    for (const m of todo) {
      const conv = ctx.conversations.get(m.conversationKey)!;
      const id = ids.get(m.key)!;
      const authorId = ctx.people.get(m.authorKey)!.id;
      let rootId: string | null = null;
      if (m.threadKey) {
        rootId = ids.get(m.threadKey) ?? earlier?.get(m.threadKey) ?? null;
        if (rootId === null) bump(ctx.report, 'replies whose thread start is not in the export');
      }
      let text = resolveText(m.text, ctx.people);
      const files = stored.get(m.key) ?? [];
      // A file not stored stays named in the text, and the report lists it.
      const named: string[] = [];
      for (const [i, f] of m.files.entries()) {
        const got = files[i];
        if (got?.ok) {
          if (got.stored) {
            attachments.push(
              importedAttachment(got.fileName, got.stored, m.createdAt, id, conv, authorId),
            );
          }
          ctx.report.created.attachments++;
          continue;
        }
        named.push(`📎 ${f.name}`);
        ctx.report.files.push({
          ...f,
          conversation: conv.label,
          at: new Date(m.createdAt).toISOString(),
          ...(got?.reason ? { reason: got.reason } : {}),
        });
      }
      if (named.length > 0)
        text = text.trim() === '' ? named.join('\n') : `${text}\n${named.join('\n')}`;
      const parsed = parseMentions(text);
      const mentioned = [
        ...new Set(
          m.mentionKeys.flatMap((k) => (ctx.people.has(k) ? [ctx.people.get(k)!.id] : [])),
        ),
      ];
      const row: MessageTable = {
        id,
        conversationId: conv.id,
        workspaceId: conv.workspaceId,
        authorId,
        text,
        ciphertext: null,
        threadRootId: rootId,
        forwardedFromId: null,
        createdAt: m.createdAt,
        editedAt: m.editedAt,
        deletedAt: null,
        deletedBy: null,
        replyCount: 0,
        lastReplyAt: null,
        mentions: JSON.stringify({
          users: mentioned,
          channels: [],
          here: parsed.here,
          channel: parsed.channel,
        }),
      };
      rows.push(row);
      byId.set(id, row);
      if (rootId) {
        const root = byId.get(rootId);
        if (root) {
          root.replyCount++;
          root.lastReplyAt = Math.max(root.lastReplyAt ?? 0, m.createdAt);
        } else {
          roots.add(rootId);
        }
        ctx.report.created.replies++;
      }
      for (const r of m.reactions) {
        const emoji = reactionEmoji(r.name);
        const accountId = ctx.people.get(r.personKey)?.id;
        if (!emoji || !accountId) {
          bump(ctx.report, 'reactions with an emoji svc cannot store');
          continue;
        }
        reactions.set(`${id} ${accountId} ${emoji}`, {
          messageId: id,
          accountId,
          emoji,
          createdAt: r.createdAt,
        });
      }
      if (m.pin) {
        pins.push({
          conversationId: conv.id,
          messageId: id,
          pinnedBy: ctx.people.get(m.pin.personKey)!.id,
          pinnedAt: m.pin.at,
        });
      }
      const newest = ctx.newest.get(conv.id);
      if (!newest || newest.at < m.createdAt || (newest.at === m.createdAt && newest.id < id)) {
        ctx.newest.set(conv.id, { at: m.createdAt, id });
      }
    }
    ctx.report.created.messages += rows.length;
    ctx.report.created.reactions += reactions.size;
    ctx.report.created.pins += pins.length;
    if (ctx.dryRun) return;

    // The worker works out the search terms while this thread writes the rows.
    const terms = ctx.terms.analyze(rows.map((r) => r.text));
    terms.catch(() => undefined); // awaited below; a failed write must not leave it unhandled
    await insertMessages(db, rows);
    await insertReactions(db, [...reactions.values()]);
    await insertPins(db, pins);
    for (const a of attachments) await insertAttachment(db, a);
    await recountThreads(db, [...roots]);
    const latest = new Map<string, number>();
    for (const r of rows)
      latest.set(r.conversationId, Math.max(latest.get(r.conversationId) ?? 0, r.createdAt));
    for (const [conversationId, at] of latest) await touchConversation(db, conversationId, at);
    await recordMappings(
      db,
      ctx.source,
      'message',
      todo.map((m) => [m.key, ids.get(m.key)!] as const),
    );
    // New messages: their index rows are added, there are none to drop.
    const found = await terms;
    await insertMessageTerms(
      db,
      rows.flatMap((r, i) => (found[i] ? [{ messageId: r.id, terms: found[i] }] : [])),
    );
  };
  if (ctx.dryRun) await write(kysely);
  else
    await ctx.db.transaction(async (tx) => {
      await relaxCommit(tx.db, ctx.db.dialect);
      await write(tx.db);
    });
}

function bump(report: ImportReport, reason: string): void {
  report.skipped[reason] = (report.skipped[reason] ?? 0) + 1;
}

/** The row of a file imported with its message: uploaded and finalized when the message was sent. */
function importedAttachment(
  fileName: string,
  stored: StoredUpload,
  at: number,
  messageId: string,
  conv: ConversationTarget,
  uploaderId: string,
): AttachmentTable {
  return {
    id: uuidv7({ msecs: at }),
    conversationId: conv.id,
    workspaceId: conv.workspaceId,
    uploaderId,
    fileName,
    contentType: stored.contentType,
    // No upload token was issued: no token hashes to this, and the row is uploaded already.
    uploadTokenHash: 'imported',
    uploadExpiresAt: at,
    sha256: stored.sha256,
    sizeBytes: stored.sizeBytes,
    width: stored.width,
    height: stored.height,
    uploadedAt: at,
    messageId,
    finalizedAt: at,
    createdAt: at,
  };
}
