import { sql } from 'kysely';

import type { Executor } from '../../db/database.js';
import { keysetQuery, type KeysetPage } from '../paging/index.js';
import type {
  CommandConfirmationTable,
  CommandKeybindTable,
  CommandMacroTable,
  CommandPipelineTable,
  CommandReminderTable,
} from '../../db/tables/commands.js';

// The command system's tables: confirmations, reminders, macros, keybinds, pipelines.

// Confirmations

export async function insertConfirmation(db: Executor, row: CommandConfirmationTable) {
  await db.insertInto('command_confirmation').values(row).execute();
}

export async function findConfirmation(db: Executor, tokenHash: string) {
  return db
    .selectFrom('command_confirmation')
    .selectAll()
    .where('tokenHash', '=', tokenHash)
    .executeTakeFirst();
}

/** Marks a confirmation used unless it already was; true when this call used it. */
export async function useConfirmation(db: Executor, tokenHash: string, at: number) {
  const res = await db
    .updateTable('command_confirmation')
    .set({ usedAt: at })
    .where('tokenHash', '=', tokenHash)
    .where('usedAt', 'is', null)
    .where('expiresAt', '>', at)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Confirmations expired for a day (kept that long so a late replay still reads as stale). */
export async function pruneConfirmations(db: Executor, before: number) {
  const res = await db
    .deleteFrom('command_confirmation')
    .where('expiresAt', '<', before)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

// Reminders

export async function insertReminder(db: Executor, row: CommandReminderTable) {
  await db.insertInto('command_reminder').values(row).execute();
}

export async function dueReminders(db: Executor, now: number, limit: number) {
  return db
    .selectFrom('command_reminder')
    .selectAll()
    .where('dueAt', '<=', now)
    .orderBy('dueAt')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Takes a reminder for posting; false when another process took it first. */
export async function claimReminder(db: Executor, id: string) {
  const res = await db.deleteFrom('command_reminder').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

export async function remindersOf(db: Executor, accountId: string) {
  return db
    .selectFrom('command_reminder')
    .selectAll()
    .where('accountId', '=', accountId)
    .orderBy('dueAt')
    .execute();
}

// Macros

export async function insertMacro(db: Executor, row: CommandMacroTable) {
  await db.insertInto('command_macro').values(row).execute();
}

export async function findMacro(db: Executor, id: string) {
  return db.selectFrom('command_macro').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A person's own rows, and a workspace's when one is named (macros and keybinds alike). */
function ownedOrOfWorkspace(scope: { ownerId: string; workspaceId: string | null }) {
  const own = sql<boolean>`${sql.ref('ownerId')} = ${scope.ownerId}`;
  return scope.workspaceId === null
    ? own
    : sql<boolean>`(${own} or ${sql.ref('workspaceId')} = ${scope.workspaceId})`;
}

/** A page of one person's macros, with a workspace's when one is named, oldest first. */
export async function macrosPage(
  db: Executor,
  scope: { ownerId: string; workspaceId: string | null },
  page: KeysetPage,
) {
  const q = db.selectFrom('command_macro').selectAll().where(ownedOrOfWorkspace(scope));
  return keysetQuery(q, { at: 'createdAt', key: 'id' }, 'asc', page).execute();
}

/** How many macros or keybinds a workspace, or one person, has. */
async function countOf(
  db: Executor,
  table: 'command_macro' | 'command_keybind',
  scope: { workspaceId: string } | { ownerId: string },
) {
  const q = db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
  const row = await (
    'workspaceId' in scope
      ? q.where('workspaceId', '=', scope.workspaceId)
      : q.where('ownerId', '=', scope.ownerId)
  ).executeTakeFirstOrThrow();
  return Number(row.n);
}

export function countMacros(db: Executor, scope: { workspaceId: string } | { ownerId: string }) {
  return countOf(db, 'command_macro', scope);
}

export async function deleteMacro(db: Executor, id: string) {
  await db.deleteFrom('command_keybind').where('macroId', '=', id).execute();
  const res = await db.deleteFrom('command_macro').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

// Keybinds

export async function upsertKeybind(db: Executor, row: CommandKeybindTable) {
  let q = db.deleteFrom('command_keybind').where('chord', '=', row.chord);
  q = row.ownerId
    ? q.where('ownerId', '=', row.ownerId)
    : q.where('workspaceId', '=', row.workspaceId as string);
  await q.execute();
  await db.insertInto('command_keybind').values(row).execute();
}

export async function keybindsOf(
  db: Executor,
  scope: { workspaceId: string } | { ownerId: string },
) {
  const q = db.selectFrom('command_keybind').selectAll().orderBy('chord');
  return (
    'workspaceId' in scope
      ? q.where('workspaceId', '=', scope.workspaceId)
      : q.where('ownerId', '=', scope.ownerId)
  ).execute();
}

/** A page of one person's keybinds, with a workspace's defaults when one is named, oldest first. */
export async function keybindsPage(
  db: Executor,
  scope: { ownerId: string; workspaceId: string | null },
  page: KeysetPage,
) {
  const q = db.selectFrom('command_keybind').selectAll().where(ownedOrOfWorkspace(scope));
  return keysetQuery(q, { at: 'createdAt', key: 'id' }, 'asc', page).execute();
}

export async function findKeybind(db: Executor, id: string) {
  return db.selectFrom('command_keybind').selectAll().where('id', '=', id).executeTakeFirst();
}

export function countKeybinds(db: Executor, scope: { workspaceId: string } | { ownerId: string }) {
  return countOf(db, 'command_keybind', scope);
}

export async function deleteKeybind(db: Executor, id: string) {
  const res = await db.deleteFrom('command_keybind').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

// Pipelines

export async function insertPipeline(db: Executor, row: CommandPipelineTable) {
  await db.insertInto('command_pipeline').values(row).execute();
}

export async function findPipeline(db: Executor, id: string) {
  return db.selectFrom('command_pipeline').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A page of a workspace's pipelines, oldest first. */
export async function pipelinesPage(db: Executor, workspaceId: string, page: KeysetPage) {
  const q = db.selectFrom('command_pipeline').selectAll().where('workspaceId', '=', workspaceId);
  return keysetQuery(q, { at: 'createdAt', key: 'id' }, 'asc', page).execute();
}

export async function countPipelines(db: Executor, workspaceId: string) {
  const row = await db
    .selectFrom('command_pipeline')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspaceId', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function deletePipeline(db: Executor, id: string) {
  const res = await db.deleteFrom('command_pipeline').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

export async function updatePipeline(
  db: Executor,
  id: string,
  patch: Partial<Omit<CommandPipelineTable, 'id' | 'workspaceId' | 'createdAt'>>,
) {
  await db.updateTable('command_pipeline').set(patch).where('id', '=', id).execute();
}

/**
 * Moves a scheduled pipeline's next run from `expected` to `next`; true when this call did (so
 * one process of several runs it).
 */
export async function claimScheduledRun(db: Executor, id: string, expected: number, next: number) {
  const res = await db
    .updateTable('command_pipeline')
    .set({ nextRunAt: next })
    .where('id', '=', id)
    .where('nextRunAt', '=', expected)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Counts a run if the window is still as read; false when another process counted first. */
export async function countPipelineRun(
  db: Executor,
  read: Pick<CommandPipelineTable, 'id' | 'windowStart' | 'windowRuns'>,
  next: Pick<CommandPipelineTable, 'windowStart' | 'windowRuns' | 'lastRunAt'>,
) {
  const res = await db
    .updateTable('command_pipeline')
    .set(next)
    .where('id', '=', read.id)
    .where('windowRuns', '=', read.windowRuns)
    .where('windowStart', '=', read.windowStart)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function dueScheduledPipelines(db: Executor, now: number, limit: number) {
  return db
    .selectFrom('command_pipeline')
    .selectAll()
    .where('nextRunAt', '<=', now)
    .where('enabled', '=', 1)
    .orderBy('nextRunAt')
    .limit(limit)
    .execute();
}

/** Pipelines of a workspace listening for a trigger kind (enabled ones). */
export async function pipelinesListening(db: Executor, workspaceId: string) {
  return db
    .selectFrom('command_pipeline')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('enabled', '=', 1)
    .execute();
}

// Deletion

/** Workspace deletion: its macros, keybinds, pipelines and reminders. */
export async function deleteForWorkspace(db: Executor, workspaceId: string) {
  await db.deleteFrom('command_keybind').where('workspaceId', '=', workspaceId).execute();
  await db.deleteFrom('command_macro').where('workspaceId', '=', workspaceId).execute();
  await db.deleteFrom('command_pipeline').where('workspaceId', '=', workspaceId).execute();
  await db.deleteFrom('command_reminder').where('workspaceId', '=', workspaceId).execute();
}

/** Account purge: the person's macros, keybinds, reminders, pipelines and confirmations. */
export async function deleteForAccount(db: Executor, accountId: string) {
  const macroIds = db.selectFrom('command_macro').select('id').where('ownerId', '=', accountId);
  await db.deleteFrom('command_keybind').where('macroId', 'in', macroIds).execute();
  await db.deleteFrom('command_keybind').where('ownerId', '=', accountId).execute();
  await db.deleteFrom('command_macro').where('ownerId', '=', accountId).execute();
  await db.deleteFrom('command_reminder').where('accountId', '=', accountId).execute();
  await db.deleteFrom('command_pipeline').where('ownerId', '=', accountId).execute();
  await db.deleteFrom('command_confirmation').where('accountId', '=', accountId).execute();
}

// The command audit (rows of `audit_log` written through AuditLog.record).

/** One keyset page of a target's command audit, newest first. */
export async function commandAuditPage(db: Executor, target: string, page: KeysetPage) {
  const q = db
    .selectFrom('audit_log')
    .selectAll()
    .where('target', '=', target)
    .where('kind', '=', 'command');
  return keysetQuery(q, { at: 'createdAt', key: 'id' }, 'desc', page).execute();
}
