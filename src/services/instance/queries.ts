import type { Executor } from '../../db/database.js';

export async function getInstance(db: Executor) {
  return db.selectFrom('instance').selectAll().where('id', '=', 1).executeTakeFirst();
}

export async function insertInstance(db: Executor, createdAt: number) {
  await db.insertInto('instance').values({ id: 1, createdAt }).execute();
}

export async function getServerKey(db: Executor, kind: string) {
  return db.selectFrom('server_key').selectAll().where('kind', '=', kind).executeTakeFirst();
}

export async function insertServerKey(
  db: Executor,
  row: { kind: string; privateKey: string; publicKey: string; createdAt: number },
) {
  await db.insertInto('server_key').values(row).execute();
}

/**
 * Takes the one `instance` row's write lock for the rest of the transaction (a no-op update: a
 * row lock on PostgreSQL, the write lock on SQLite), for instance-wide checks.
 */
export async function lockInstance(db: Executor): Promise<void> {
  await db
    .updateTable('instance')
    .set((eb) => ({ createdAt: eb.ref('createdAt') }))
    .where('id', '=', 1)
    .execute();
}

/** Replaces the key of one kind (a server key rotation, in the key log's transaction). */
export async function replaceServerKey(
  db: Executor,
  row: { kind: string; privateKey: string; publicKey: string; createdAt: number },
) {
  await db
    .updateTable('server_key')
    .set({ privateKey: row.privateKey, publicKey: row.publicKey, createdAt: row.createdAt })
    .where('kind', '=', row.kind)
    .execute();
}
