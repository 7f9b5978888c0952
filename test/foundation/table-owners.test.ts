import path from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  checkTableOwners,
  dynamicWrites,
  edgeRowTypes,
  foreignWrites,
  misplacedRowTypes,
  readSources,
  ruleCopies,
} from '../../scripts/check-table-owners.js';

const q = (s: string) => `export async function f(db) {\n  ${s}\n}\n`;

describe('the table-owner check', () => {
  it.each([
    // [file under src/, code, the tables it should flag]
    [
      'services/messages/queries.ts',
      q("await db.insertInto('message').values(row).execute();"),
      [],
    ],
    [
      'services/moderation/queries.ts',
      q("await db.deleteFrom('reaction').execute();"),
      ['reaction'],
    ],
    [
      'services/messages/message-service.ts',
      q("await db.updateTable('message').set(p).execute();"),
      ['message'],
    ],
    [
      'services/workspaces/queries.ts',
      q("await db.updateTable('account as a').set(p).execute();"),
      ['account'],
    ],
    [
      'services/conversations/channel-queries.ts',
      q("await db.insertInto('conversation').values(r).execute();"),
      [],
    ],
    [
      'services/conversations/channel-queries.ts',
      q("await db.insertInto('workspace_member').values(r).execute();"),
      ['workspace_member'],
    ],
    // Channels are conversations: the channels area writes them through conversations.
    [
      'services/channels/channel-service.ts',
      q("await db.insertInto('conversation').values(r).execute();"),
      ['conversation'],
    ],
    ['services/audit/audit-log.ts', q("await db.insertInto('audit_log').values(r).execute();"), []],
    ['services/dm/queries.ts', q("await db.selectFrom('account').selectAll().execute();"), []],
    [
      'services/registration/queries.ts',
      q('await sql`insert into workspace_member (a) values (${a})`.execute(db);'),
      ['workspace_member'],
    ],
    [
      'services/dm/queries.ts',
      q(
        'await sql`insert into dm_settings (a) values (1) on conflict (a) do update set a = 2`.execute(db);',
      ),
      [],
    ],
    [
      'services/account-deletion/queries.ts',
      q('await sql`select id from account where id = ${id} for update`.execute(db);'),
      [],
    ],
    [
      'services/devices/queries.ts',
      q('await sql`delete from session where "accountId" = ${id}`.execute(db);'),
      ['session'],
    ],
    ['db/migrations/0009-x.ts', q("await db.insertInto('account').values(r).execute();"), []],
    ['services/x/thing.test.ts', q("await db.insertInto('account').values(r).execute();"), []],
  ])('%s: %s', (file, text, tables) => {
    expect(foreignWrites([{ path: file, text }]).map((w) => w.table)).toEqual(tables);
  });

  it('names the file, line and owner of a foreign write', () => {
    const text = q("await db.deleteFrom('reaction').execute();");
    expect(checkTableOwners([{ path: 'services/moderation/queries.ts', text }], [])).toEqual([
      'src/services/moderation/queries.ts:2: writes reaction, which services/messages owns; call an exported function of src/services/messages/queries.ts',
    ]);
  });

  it('tolerates a pending move only while it is still there', () => {
    const text = q("await db.updateTable('message').set(p).execute();");
    const file = 'services/messages/message-service.ts';
    expect(checkTableOwners([{ path: file, text }], [`${file} message`])).toEqual([]);
    expect(checkTableOwners([{ path: file, text: '' }], [`${file} message`])).toEqual([
      `"${file} message" is no longer written; remove it from PENDING_MOVES`,
    ]);
  });

  it('allows a write to a table named at run time only in the whole-database writers', () => {
    const text = q('await client.query(`delete from ${ident(t.name)}`);');
    const copyIn = q('client.query(copyFrom(`copy ${ident(t.name)} (${cols}) from stdin`));');
    const copyOut = q('client.query(copyTo(`copy ${ident(t.name)} (${cols}) to stdout`));');
    expect(dynamicWrites([{ path: 'services/x/queries.ts', text }])).toEqual([
      'services/x/queries.ts:2',
    ]);
    expect(dynamicWrites([{ path: 'data/export.ts', text: copyIn }])).toEqual(['data/export.ts:2']);
    expect(dynamicWrites([{ path: 'data/backup.ts', text: copyOut }])).toEqual([]);
    expect(dynamicWrites([{ path: 'data/pg-load.ts', text }])).toEqual([]);
    // The real loader (restore's and move's) writes so, and would be refused without its entry.
    const src = path.resolve(import.meta.dirname, '../../src');
    expect(
      dynamicWrites(readSources(src), []).some((at) => at.startsWith('data/pg-load.ts:')),
    ).toBe(true);
  });

  it.each([
    // [file under src/, code, the rules it should flag]
    [
      'services/moderation/reports.ts',
      q("if (role !== 'owner' && role !== 'moderator') x();"),
      ['role', 'role'],
    ],
    [
      'services/commands/pipelines.ts',
      q("return access.isPrivate === 0 && access.role !== 'guest';"),
      ['role', 'privacy'],
    ],
    ['services/channels/channel-service.ts', q("if (actorRole === 'guest') x();"), ['role']],
    [
      'services/x/y.ts',
      q("if ('guest' === m.role || 1 === c.isPrivate) x();"),
      ['role', 'privacy'],
    ],
    ['services/x/y.ts', q("if (m.state === 'member' && kind === 'channel') x();"), []],
    ['services/x/y.ts', q('if (isGuest(m.role) || !canRead(facts, now)) x();'), []],
    ['services/workspaces/members.ts', q("if (role === 'owner') x();"), []],
    ['auth/policy.ts', q("return role === 'guest';"), []],
    ['services/conversations/events.ts', q('if (conv.isPrivate === 1) x();'), []],
    ['services/channels/channel-service.ts', q('if (channel.isPrivate === 1) x();'), []],
    ['graphql/resolvers/c.ts', q('isPrivate: (c) => c.isPrivate === 1,'), ['privacy']],
    ['services/x/y.test.ts', q("if (role === 'guest') x();"), []],
  ])('rules: %s: %s', (file, text, rules) => {
    expect(ruleCopies([{ path: file, text }]).map((c) => c.rule)).toEqual(rules);
  });

  it('names the file, line and owner of a copied rule', () => {
    const text = q("return role !== null && role !== 'guest';");
    expect(checkTableOwners([{ path: 'services/moderation/queries.ts', text }], [])).toEqual([
      'src/services/moderation/queries.ts:2: tests a workspace role by name; ask auth/policy.ts (can, isGuest, atLeast) or Authz',
    ]);
  });

  it('names a row type filed away from its owner', () => {
    const text = [
      "import type { DmRequestTable, MessageTable } from './tables/messages.js';",
      'export interface Database {',
      '  message: MessageTable;',
      '  dm_request: DmRequestTable;',
      '}',
    ].join('\n');
    expect(misplacedRowTypes([{ path: 'db/schema.ts', text }])).toEqual([
      { table: 'dm_request', rowType: 'DmRequestTable', file: 'messages', expected: 'dm' },
    ]);
    expect(checkTableOwners([{ path: 'db/schema.ts', text }], [])).toEqual([
      'src/db/tables/messages.ts holds DmRequestTable, the row type of dm_request, which services/dm owns; move it to src/db/tables/dm.ts',
    ]);
  });

  it.each([
    // [file under src/, an import line, whether it names a row type]
    [
      'http/routes/x.ts',
      "import type { AttachmentTable } from '../../db/tables/attachments.js';",
      true,
    ],
    ['http/x.ts', "import type { Database } from '../db/schema.js';", true],
    [
      'graphql/resolvers/a/b.ts',
      "import type { MessageTable } from '../../../db/tables/messages.js';",
      true,
    ],
    ['ws/x.ts', "export type { DeviceTable } from '../db/tables/devices.js';", true],
    ['http/routes/probes.ts', "import { pendingMigrations } from '../../db/migrate.js';", false],
    [
      'http/routes/x.test.ts',
      "import type { AttachmentTable } from '../../db/tables/attachments.js';",
      false,
    ],
    [
      'services/x/y.ts',
      "import type { AttachmentTable } from '../../db/tables/attachments.js';",
      false,
    ],
  ])('edge row types: %s: %s', (file, text, flagged) => {
    expect(edgeRowTypes([{ path: file, text: `${text}\n` }]).length).toBe(flagged ? 1 : 0);
  });

  it('names the file, line and import of a row type in an HTTP route', () => {
    const text = [
      "import type { FastifyRequest } from 'fastify';",
      "import type { AttachmentTable } from '../../db/tables/attachments.js';",
    ].join('\n');
    expect(checkTableOwners([{ path: 'http/routes/attachments.ts', text }], [])).toEqual([
      `src/http/routes/attachments.ts:2: imports ../../db/tables/attachments.js, a table's row type; an edge takes a view from the owning service (docs/architecture.md, "The lint zones")`,
    ]);
  });

  it('passes on the source tree', () => {
    const src = path.resolve(import.meta.dirname, '../../src');
    expect(checkTableOwners(readSources(src))).toEqual([]);
  });
});
