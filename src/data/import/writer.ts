import fs from 'node:fs';

import type { Db, Executor } from '../../db/database.js';
import type { BlobStore } from '../../services/files/index.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { WorkspaceRole } from '../../db/tables/workspaces.js';
import { UNCLAIMED_PASSWORD_HASH, issueClaimTokens, lookupKey, findAccountByUsernameKey } from '../../services/accounts/index.js';
import { addConversationMembers, advanceReadMarkerStatement } from '../../services/conversations/index.js';

import { importEmoji } from './files.js';
import { startTermAnalyzer, type TermAnalyzer } from './terms.js';
import type { ImportSource, SourceMessage, SourceRole } from './model.js';
import { insertPeople, planPeople } from './people.js';
import { bulkCommits, mappedIds, recordMappings, refreshMapStatistics } from './queries.js';
import { emptyReport, type ImportReport } from './report.js';
import {
  addWorkspaceMembers,
  channelName,
  chooseOwner,
  createConversation,
  createWorkspace,
} from './spaces.js';
import { writeBatch, type ConversationTarget, type MessageContext } from './write-messages.js';

// Maps a read export onto svc: people, then workspaces, then conversations, then messages in
// batches. Every item commits with its import-map row, so a second run changes nothing and a run
// cut short goes on where it stopped. With `dryRun` everything is read and decided, nothing
// written, and the report says what would be made.

export interface ImportOptions {
  file: string;
  /** Where the files the export carries are stored (the data directory's blob store). */
  blobs: BlobStore;
  dryRun: boolean;
  /** Messages per transaction. */
  batchSize: number;
  /** An existing account to own each new workspace (instead of the export's owner). */
  owner: string | null;
  /** Where to write a claim token for each unclaimed account of the import (CSV, mode 0600). */
  claimTokens: string | null;
  /** Called after each batch with the messages read so far. */
  onProgress?: (messagesRead: number) => void;
}

/**
 * The role each source role joins with: the workspace has one owner (the one chosen), so the
 * source's other owners join as Moderators.
 */
const JOINS_AS: Record<SourceRole, WorkspaceRole> = {
  owner: 'moderator',
  moderator: 'moderator',
  member: 'member',
  guest: 'guest',
};

export class OwnerNotFoundError extends Error {}

export async function writeImport(
  db: Db,
  source: ImportSource,
  opts: ImportOptions,
): Promise<ImportReport> {
  const started = Date.now();
  const report = emptyReport(source.name, opts.file, opts.dryRun);
  const now = Date.now();
  const kysely = db.kysely;
  const run = async (fn: (ex: Executor) => Promise<void>) => {
    if (opts.dryRun) return;
    await db.transaction((tx) => fn(tx.db));
  };

  let ownerId: string | null = null;
  if (opts.owner) {
    const owner = await findAccountByUsernameKey(kysely, lookupKey(opts.owner));
    if (!owner) throw new OwnerNotFoundError(`no account is named "${opts.owner}"`);
    ownerId = owner.id;
  }

  // People: everyone listed, and later anyone a message names that the list did not.
  const people: MessageContext['people'] & Map<string, { id: string; username: string }> =
    new Map();
  const taken = new Set<string>();
  const ensurePeople = async (ex: Executor, keys: readonly string[]) => {
    const wanted = keys.filter((k) => !people.has(k) && source.people.has(k));
    if (wanted.length === 0) return;
    const mapped = await mappedIds(ex, source.name, 'person', wanted);
    const found = await usernamesOf(ex, [...mapped.values()]);
    for (const [key, id] of mapped) people.set(key, { id, username: found.get(id) ?? key });
    const fresh = wanted.filter((k) => !mapped.has(k)).map((k) => source.people.get(k)!);
    report.existing.accounts += mapped.size;
    if (fresh.length === 0) return;
    const plan = await planPeople(ex, fresh, now, taken);
    const names = await usernamesOf(ex, [...plan.ids.values()]);
    for (const row of plan.rows) names.set(row.id, row.username);
    for (const [key, id] of plan.ids) people.set(key, { id, username: names.get(id) ?? key });
    report.created.accounts += plan.rows.length;
    report.existing.accounts += plan.matched;
    report.accounts.push(...plan.created);
    if (opts.dryRun) return;
    await insertPeople(ex, plan);
    await recordMappings(ex, source.name, 'person', [...plan.ids]);
  };
  if (opts.dryRun) await ensurePeople(kysely, [...source.people.keys()]);
  else await db.transaction((tx) => ensurePeople(tx.db, [...source.people.keys()]));

  // Workspaces and their members.
  const workspaceIds = new Map<string, string>();
  const known = await mappedIds(
    kysely,
    source.name,
    'workspace',
    source.workspaces.map((w) => w.key),
  );
  for (const ws of source.workspaces) {
    const members = new Map<string, WorkspaceRole>();
    for (const [key, role] of ws.members) {
      const p = people.get(key);
      if (p && !source.people.get(key)?.deactivated) members.set(p.id, JOINS_AS[role]);
    }
    const existing = known.get(ws.key);
    if (existing) {
      workspaceIds.set(ws.key, existing);
      report.existing.workspaces++;
      await run(async (ex) => {
        report.created.workspaceMembers += await addWorkspaceMembers(ex, existing, members, now);
      });
      continue;
    }
    const owner = chooseOwner(ws, people.size ? idsOf(people) : new Map(), ownerId);
    if (!owner) {
      report.problems.push({
        file: opts.file,
        line: 0,
        message: `workspace "${ws.name}" has no members to own it; name an owner with --owner`,
      });
      continue;
    }
    members.delete(owner);
    report.created.workspaces++;
    report.created.workspaceMembers += members.size + 1;
    if (opts.dryRun) {
      workspaceIds.set(ws.key, `dry-run:${ws.key}`);
      continue;
    }
    await db.transaction(async (tx) => {
      const id = await createWorkspace(tx.db, ws, owner, members, now);
      await recordMappings(tx.db, source.name, 'workspace', [[ws.key, id]]);
      workspaceIds.set(ws.key, id);
    });
  }

  // Custom emoji, before the messages whose reactions use them.
  await importEmoji(db, opts.blobs, source, [...workspaceIds.values()], report, opts.dryRun);

  // Conversations and their members.
  const conversations = new Map<string, ConversationTarget>();
  const knownConversations = await mappedIds(
    kysely,
    source.name,
    'conversation',
    source.conversations.map((c) => c.key),
  );
  for (const c of source.conversations) {
    const workspaceId = c.workspaceKey === null ? null : workspaceIds.get(c.workspaceKey);
    if (workspaceId === undefined) continue; // its workspace could not be made (a problem says why)
    const memberIds = [...c.members].flatMap((k) => (people.has(k) ? [people.get(k)!.id] : []));
    const label = c.kind === 'channel' ? `#${c.name}` : c.kind;
    const existing = knownConversations.get(c.key);
    if (existing) {
      conversations.set(c.key, {
        id: existing,
        workspaceId: workspaceId ?? DIRECT_SPACE_ID,
        label,
      });
      report.existing.conversations++;
      await run((ex) =>
        addConversationMembers(
          ex,
          memberIds.map((accountId) => ({ conversationId: existing, accountId })),
          c.createdAt,
        ),
      );
      continue;
    }
    let name: string | null = c.name;
    if (c.kind === 'channel') {
      const fitted = channelName(c);
      if (typeof fitted !== 'string') {
        report.problems.push(fitted);
        continue;
      }
      name = fitted;
    }
    if (c.kind !== 'channel' && memberIds.length === 0) {
      report.problems.push({ ...c.place, message: `a ${c.kind} conversation without members` });
      continue;
    }
    const createdBy =
      (c.createdBy && people.get(c.createdBy)?.id) || memberIds[0] || ownerId || firstId(people);
    if (!createdBy) continue;
    report.created.conversationMembers += memberIds.length;
    if (c.kind === 'channel') report.created.channels++;
    else if (c.kind === 'direct') report.created.directConversations++;
    else report.created.groupConversations++;
    if (opts.dryRun) {
      conversations.set(c.key, {
        id: `dry-run:${c.key}`,
        workspaceId: workspaceId ?? DIRECT_SPACE_ID,
        label,
      });
      continue;
    }
    await db.transaction(async (tx) => {
      const made = await createConversation(tx.db, c, workspaceId, name, memberIds, createdBy);
      await recordMappings(tx.db, source.name, 'conversation', [[c.key, made.id]]);
      conversations.set(c.key, { id: made.id, workspaceId: workspaceId ?? DIRECT_SPACE_ID, label });
    });
  }

  // Messages, in batches.
  const ctx: MessageContext = {
    db,
    blobs: opts.blobs,
    files: source,
    terms: opts.dryRun ? noTerms : startTermAnalyzer(),
    source: source.name,
    dryRun: opts.dryRun,
    report,
    conversations,
    people,
    ensurePeople,
    newest: new Map(),
  };
  let batch: SourceMessage[] = [];
  let read = 0;
  let batches = 0;
  await refreshMapStatistics(kysely, db.dialect);
  if (!opts.dryRun) await bulkCommits(kysely, db.dialect, true);
  try {
    for await (const m of source.messages()) {
      batch.push(m);
      read++;
      if (batch.length >= opts.batchSize) {
        if (++batches % 5 === 0) await refreshMapStatistics(kysely, db.dialect);
        await writeBatch(ctx, batch);
        batch = [];
        opts.onProgress?.(read);
      }
    }
    await writeBatch(ctx, batch);
    opts.onProgress?.(read);
  } finally {
    await ctx.terms.close();
    if (!opts.dryRun) await bulkCommits(kysely, db.dialect, false);
  }

  // The history is read: each member's read marker at the newest imported message, so the
  // import does not leave everyone with years of unread messages.
  if (!opts.dryRun) {
    for (const [conversationId, newest] of ctx.newest) {
      const members = await kysely
        .selectFrom('conversation_member')
        .select('accountId')
        .where('conversationId', '=', conversationId)
        .execute();
      await db.transaction(async (tx) => {
        for (const m of members) {
          await tx.db.executeQuery(
            advanceReadMarkerStatement(tx.db, conversationId, m.accountId, newest.at, newest.id),
          );
        }
      });
    }
  }

  if (opts.claimTokens && !opts.dryRun) {
    report.claimTokens = await writeClaimTokens(db, [...people.values()], opts.claimTokens);
  }

  report.problems.unshift(...source.problems);
  report.problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  for (const [reason, n] of source.skipped)
    report.skipped[reason] = (report.skipped[reason] ?? 0) + n;
  report.seconds = Math.round((Date.now() - started) / 100) / 10;
  return report;
}

/**
 * Issues a claim token to each account of the import still unclaimed and writes them as CSV
 * (`username,email,token`), readable by its owner only: the operator hands each person theirs.
 */
async function writeClaimTokens(
  db: Db,
  people: readonly { id: string; username: string }[],
  file: string,
): Promise<{ file: string; tokens: number }> {
  const tokens = await db.transaction((tx) =>
    issueClaimTokens(
      tx.db,
      people.map((p) => p.id),
      UNCLAIMED_PASSWORD_HASH,
      Date.now(),
    ),
  );
  const emails = new Map(
    (
      await db.kysely
        .selectFrom('account')
        .select(['id', 'email'])
        .where('id', 'in', [...tokens.keys(), ''])
        .execute()
    ).map((r) => [r.id, r.email]),
  );
  const quote = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  const lines = ['username,email,token'];
  for (const p of people) {
    const token = tokens.get(p.id);
    if (token) lines.push([p.username, emails.get(p.id) ?? '', token].map(quote).join(','));
  }
  await fs.promises.writeFile(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  return { file, tokens: tokens.size };
}

function idsOf(people: ReadonlyMap<string, { id: string }>): Map<string, string> {
  return new Map([...people].map(([k, v]) => [k, v.id]));
}

function firstId(people: ReadonlyMap<string, { id: string }>): string | null {
  for (const p of people.values()) return p.id;
  return null;
}

async function usernamesOf(db: Executor, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('account')
      .select(['id', 'username'])
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const r of rows) out.set(r.id, r.username);
  }
  return out;
}

/** A dry run writes no search rows. */
const noTerms: TermAnalyzer = {
  analyze: async (texts) => texts.map(() => ''),
  close: async () => {},
};
