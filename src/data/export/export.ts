import type { Kysely } from 'kysely';

import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { ConversationTable } from '../../db/tables/conversations.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { BlobStore } from '../../services/files/index.js';
import { BackupError } from '../manifest.js';
import { count, type Progress } from '../progress.js';

import { blobOfPath, flag, iso, type ExportManifest, type ExportScope } from './format.js';
import { pages, writePaged } from './paged.js';
import {
  conversationRecord,
  reactionRecord,
  writeMessagePage,
  type MessageParts,
} from './records.js';
import { ExportWriter } from './writer.js';

// `svc export workspace <id>` and `svc export account <username>` (docs/export.md), and the
// download a person asks for in the web client's settings (services/data-export). Read page by
// page while the server runs; the manifest's `createdAt` is when it started.

/** A refusal of an export (an unknown workspace or account): the message says what is wrong. */
export { BackupError as ExportRefusal };

/** What an export reads: the database and the stored files. */
export interface ExportSource {
  db: Db;
  blobs: BlobStore;
}

/** Every conversation of a workspace with its members, messages and files, its people, emoji. */
export async function exportWorkspace(
  source: ExportSource,
  workspaceId: string,
  dir: string,
  progress: Progress,
): Promise<ExportManifest> {
  const db = source.db.kysely;
  const ws = await db
    .selectFrom('workspace')
    .selectAll()
    .where('id', '=', workspaceId)
    .where('isDirect', '=', 0)
    .executeTakeFirst();
  if (!ws) {
    throw new BackupError(
      `there is no workspace with id ${workspaceId} (direct and group conversations belong to no workspace: export them with svc export account)`,
    );
  }
  const scope: ExportScope = { kind: 'workspace', id: ws.id, name: ws.name };
  return write(source, dir, progress, scope, async (out) => {
    await out.part('workspace.jsonl', 'workspace').write({
      id: ws.id,
      name: ws.name,
      description: ws.description,
      ownerId: ws.ownerId,
      createdAt: iso(ws.createdAt),
      updatedAt: iso(ws.updatedAt),
    });
    await writePaged(
      out.part('members.jsonl', 'member'),
      {
        query: db
          .selectFrom('workspace_member as wm')
          .innerJoin('account as a', 'a.id', 'wm.accountId')
          .select([
            'a.id',
            'a.username',
            'a.displayName',
            'a.email',
            'a.homeServer',
            'a.avatarPath',
            'a.deletedAt',
            'wm.role',
            'wm.joinedAt',
          ])
          .where('wm.workspaceId', '=', ws.id),
        keys: ['wm.joinedAt', 'a.id'],
        keyOf: (r) => [r.joinedAt, r.id],
      },
      async (p) => ({
        id: p.id,
        username: p.username,
        displayName: p.displayName,
        email: p.email,
        homeServer: p.homeServer,
        role: p.role,
        joinedAt: iso(p.joinedAt),
        deleted: p.deletedAt !== null,
        avatar: await out.file(blobOfPath(p.avatarPath)),
      }),
    );
    await writePaged(
      out.part('custom_emoji.jsonl', 'customEmoji'),
      {
        query: db.selectFrom('custom_emoji').selectAll().where('workspaceId', '=', ws.id),
        keys: ['name'],
        keyOf: (r) => [r.name],
      },
      async (e) => ({
        id: e.id,
        name: e.name,
        contentType: e.contentType,
        width: e.width,
        height: e.height,
        createdBy: e.createdBy,
        createdAt: iso(e.createdAt),
        file: await out.file(blobOfPath(e.imagePath)),
      }),
    );
    // Conversations oldest first: their records, then their members, then their messages.
    const conversations: ConversationTable[] = [];
    await writePaged(
      out.part('conversations.jsonl', 'conversation'),
      {
        query: db.selectFrom('conversation').selectAll().where('workspaceId', '=', ws.id),
        keys: ['createdAt', 'id'],
        keyOf: (r) => [r.createdAt, r.id],
      },
      (c) => {
        conversations.push(c);
        return conversationRecord(c);
      },
    );
    const memberPart = out.part('conversation_members.jsonl', 'conversationMember');
    for (const c of conversations) {
      await writePaged(
        memberPart,
        {
          query: db
            .selectFrom('conversation_member')
            .select(['conversationId', 'accountId', 'state', 'joinedAt'])
            .where('conversationId', '=', c.id),
          keys: ['joinedAt', 'accountId'],
          keyOf: (r) => [r.joinedAt, r.accountId],
        },
        (m) => ({ ...m, joinedAt: iso(m.joinedAt) }),
      );
    }
    const parts: MessageParts = {
      messages: out.part('messages.jsonl', 'message'),
      edits: out.part('message_edits.jsonl', 'messageEdit'),
      reactions: out.part('reactions.jsonl', 'reaction'),
      pins: out.part('pins.jsonl', 'pin'),
      attachments: out.part('attachments.jsonl', 'attachment'),
    };
    for (const c of conversations) {
      for await (const page of messagePages(db, 'conversationId', c.id)) {
        await writeMessagePage(db, page, parts, out);
      }
    }
  });
}

/**
 * What the server holds about one person and what they wrote: their account, sessions,
 * workspaces, the conversations they are in, their messages (with their edits and attachments)
 * and their reactions. Others' messages are not in it: they are in the workspace's export.
 */
export async function exportAccount(
  source: ExportSource,
  accountId: string,
  dir: string,
  progress: Progress,
): Promise<ExportManifest> {
  const db = source.db.kysely;
  const a = await db
    .selectFrom('account')
    .selectAll()
    .where('id', '=', accountId)
    .executeTakeFirst();
  if (!a || a.deletedAt !== null) throw new BackupError(`there is no account ${accountId}`);
  const scope: ExportScope = { kind: 'account', id: a.id, username: a.username };
  return write(source, dir, progress, scope, async (out) => {
    await out.part('account.jsonl', 'account').write({
      id: a.id,
      username: a.username,
      displayName: a.displayName,
      email: a.email,
      homeServer: a.homeServer,
      operator: flag(a.isOperator),
      avatar: await out.file(blobOfPath(a.avatarPath)),
      acceptedTermsUrl: a.acceptedTermsUrl,
      acceptedTermsAt: iso(a.acceptedTermsAt),
      createdAt: iso(a.createdAt),
      deletionScheduledFor: iso(a.deletionScheduledFor),
    });
    await writePaged(
      out.part('sessions.jsonl', 'session'),
      {
        query: db
          .selectFrom('session')
          .select(['id', 'createdAt', 'expiresAt', 'endedAt', 'endReason', 'ip', 'userAgent'])
          .where('accountId', '=', a.id),
        keys: ['createdAt', 'id'],
        keyOf: (r) => [r.createdAt, r.id],
      },
      (s) => ({
        ...s,
        createdAt: iso(s.createdAt),
        expiresAt: iso(s.expiresAt),
        endedAt: iso(s.endedAt),
      }),
    );
    await writePaged(
      out.part('workspaces.jsonl', 'membership'),
      {
        query: db
          .selectFrom('workspace_member as wm')
          .innerJoin('workspace as w', 'w.id', 'wm.workspaceId')
          .select(['w.id', 'w.name', 'wm.role', 'wm.joinedAt'])
          .where('wm.accountId', '=', a.id)
          .where('w.isDirect', '=', 0),
        keys: ['wm.joinedAt', 'w.id'],
        keyOf: (r) => [r.joinedAt, r.id],
      },
      (w) => ({ ...w, joinedAt: iso(w.joinedAt) }),
    );
    await writePaged(
      out.part('conversations.jsonl', 'conversation'),
      {
        query: db
          .selectFrom('conversation_member as cm')
          .innerJoin('conversation as c', 'c.id', 'cm.conversationId')
          .selectAll('c')
          .where('cm.accountId', '=', a.id),
        keys: ['c.createdAt', 'c.id'],
        keyOf: (r) => [r.createdAt, r.id],
      },
      conversationRecord,
    );
    const parts: MessageParts = {
      messages: out.part('messages.jsonl', 'message'),
      edits: out.part('message_edits.jsonl', 'messageEdit'),
      reactions: null,
      pins: null,
      attachments: out.part('attachments.jsonl', 'attachment'),
    };
    for await (const page of messagePages(db, 'authorId', a.id)) {
      await writeMessagePage(db, page, parts, out);
    }
    await writePaged(
      out.part('reactions.jsonl', 'reaction'),
      {
        query: db.selectFrom('reaction').selectAll().where('accountId', '=', a.id),
        keys: ['createdAt', 'messageId', 'emoji'],
        keyOf: (r) => [r.createdAt, r.messageId, r.emoji],
      },
      reactionRecord,
    );
  });
}

/** The messages whose `column` is `value`, oldest first, a page at a time. */
function messagePages(
  db: Kysely<Database>,
  column: 'conversationId' | 'authorId',
  value: string,
): AsyncGenerator<MessageTable[]> {
  return pages({
    query: db.selectFrom('message').selectAll().where(column, '=', value),
    keys: ['createdAt', 'id'],
    keyOf: (r) => [r.createdAt, r.id],
  });
}

async function write(
  source: ExportSource,
  dir: string,
  progress: Progress,
  scope: ExportScope,
  body: (out: ExportWriter) => Promise<void>,
): Promise<ExportManifest> {
  const startedAt = new Date();
  const out = new ExportWriter(dir, source.blobs, progress);
  await out.open();
  try {
    await body(out);
    const manifest = await out.finish(scope, startedAt);
    const rows = manifest.parts.reduce((s, p) => s + p.rows, 0);
    progress.done(
      `${count(rows)} records in ${manifest.parts.length} files, ${count(manifest.files.count)} stored files -> ${dir}`,
    );
    return manifest;
  } catch (err) {
    await out.discard();
    throw err;
  }
}
