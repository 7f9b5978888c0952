import type { Executor } from '../../db/database.js';
import { keysetQuery, type KeysetPage } from '../paging/index.js';
import type { PluginBundleTable, WorkspacePluginTable } from '../../db/tables/plugins.js';

// The only writer of plugin_bundle and workspace_plugin (src/db/table-owners.ts), and their reads.

/** Records that a workspace has a bundle; answers false when it already had it. */
export async function insertBundleIfNew(db: Executor, row: PluginBundleTable): Promise<boolean> {
  const res = await db
    .insertInto('plugin_bundle')
    .values(row)
    .onConflict((oc) => oc.columns(['workspaceId', 'sha256']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function findBundle(db: Executor, workspaceId: string, sha256: string) {
  return db
    .selectFrom('plugin_bundle')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('sha256', '=', sha256)
    .executeTakeFirst();
}

/** The bundles the entries name, by sha256, in one query. */
export async function bundlesOf(db: Executor, workspaceId: string, shas: readonly string[]) {
  if (shas.length === 0) return [];
  return db
    .selectFrom('plugin_bundle')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('sha256', 'in', [...new Set(shas)])
    .execute();
}

/** A page of a workspace's registry, oldest first. */
export async function pluginsPage(db: Executor, workspaceId: string, page: KeysetPage) {
  const q = db.selectFrom('workspace_plugin').selectAll().where('workspaceId', '=', workspaceId);
  return keysetQuery(q, { at: 'createdAt', key: 'id' }, 'asc', page).execute();
}

export async function listPlugins(db: Executor, workspaceId: string, onlyEnabled = false) {
  let q = db.selectFrom('workspace_plugin').selectAll().where('workspaceId', '=', workspaceId);
  if (onlyEnabled) q = q.where('enabled', '=', 1);
  return q.orderBy('createdAt').orderBy('id').execute();
}

export async function findPlugin(db: Executor, id: string) {
  return db.selectFrom('workspace_plugin').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findPluginById(db: Executor, workspaceId: string, pluginId: string) {
  return db
    .selectFrom('workspace_plugin')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('pluginId', '=', pluginId)
    .executeTakeFirst();
}

export async function countPlugins(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('workspace_plugin')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('workspaceId', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertPlugin(db: Executor, row: WorkspacePluginTable): Promise<void> {
  await db.insertInto('workspace_plugin').values(row).execute();
}

export async function updatePlugin(
  db: Executor,
  id: string,
  set: Partial<Pick<WorkspacePluginTable, 'enabled' | 'bundleSha256' | 'settings' | 'updatedAt'>>,
): Promise<void> {
  await db.updateTable('workspace_plugin').set(set).where('id', '=', id).execute();
}

export async function deletePlugin(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('workspace_plugin').where('id', '=', id).execute();
}

/** A workspace's registry and bundle rows (workspace deletion). */
export async function deleteForWorkspace(db: Executor, workspaceId: string): Promise<void> {
  await db.deleteFrom('workspace_plugin').where('workspaceId', '=', workspaceId).execute();
  await db.deleteFrom('plugin_bundle').where('workspaceId', '=', workspaceId).execute();
}

/** Which of the blob names a bundle row of any workspace names (the blob sweep). */
export async function referencedBlobs(db: Executor, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const rows = await db
    .selectFrom('plugin_bundle')
    .select('sha256')
    .distinct()
    .where('sha256', 'in', names)
    .execute();
  return rows.map((r) => r.sha256);
}
