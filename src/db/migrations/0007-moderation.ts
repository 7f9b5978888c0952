import { sql, type Kysely } from 'kysely';

import { MS } from './helpers.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('abuse_report')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('reporterId', 'text', (c) => c.notNull())
    .addColumn('subjectKind', 'text', (c) => c.notNull())
    .addColumn('subjectId', 'text', (c) => c.notNull())
    .addColumn('subjectAccountId', 'text')
    .addColumn('workspaceId', 'text')
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('text', 'text')
    .addColumn('snapshot', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('resolvedAt', MS)
    .addColumn('resolvedBy', 'text')
    .addColumn('workspaceResolvedAt', MS)
    .addColumn('workspaceResolvedBy', 'text')
    .execute();
  // One open report per reporter and subject: a duplicate returns the open one, and the index
  // settles a race between two identical reports (partial indexes exist on both dialects).
  await db.schema
    .createIndex('abuse_report_open_dedupe_idx')
    .on('abuse_report')
    .columns(['reporterId', 'subjectKind', 'subjectId'])
    .unique()
    .where(sql.ref('resolvedAt'), 'is', null)
    .execute();
  await db.schema
    .createIndex('abuse_report_time_idx')
    .on('abuse_report')
    .columns(['createdAt', 'id'])
    .execute();
  await db.schema
    .createIndex('abuse_report_reporter_time_idx')
    .on('abuse_report')
    .columns(['reporterId', 'createdAt'])
    .execute();
  await db.schema
    .createIndex('abuse_report_workspace_idx')
    .on('abuse_report')
    .columns(['workspaceId', 'createdAt'])
    .execute();

  await db.schema
    .createTable('principal_block')
    .addColumn('principalId', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('cascade', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('createdBy', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actorId', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('details', 'text')
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('audit_log_time_idx')
    .on('audit_log')
    .columns(['createdAt', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_log_kind_time_idx')
    .on('audit_log')
    .columns(['kind', 'createdAt'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
