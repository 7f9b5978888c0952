import { InvalidArgumentError, type Command } from 'commander';

import { CLI_ACTOR } from '../auth/actor.js';
import type { AuditView } from '../services/audit/audit-log.js';
import { AUDIT_PAGE_MAX } from '../services/audit/audit-page.js';

import { printJson, withContext, type CliIo } from './io.js';

const view = (e: AuditView) => ({ ...e, createdAt: new Date(e.createdAt).toISOString() });

function limit(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > AUDIT_PAGE_MAX) {
    throw new InvalidArgumentError(`expected a whole number from 1 to ${AUDIT_PAGE_MAX}`);
  }
  return n;
}

export function registerAuditCommands(program: Command, io: CliIo): void {
  const audit = program.command('audit').description('the audit log of moderation changes');
  audit
    .command('list')
    .description('list audit entries, newest first, a page at a time')
    .option('--before <cursor>', 'older entries: the nextCursor of the previous page')
    .option('--after <cursor>', 'newer entries: the prevCursor of a page')
    .option('--limit <n>', `entries per page (1 to ${AUDIT_PAGE_MAX}, default 50)`, limit)
    .action(async (opts: { before?: string; after?: string; limit?: number }) => {
      await withContext(io, async (ctx) => {
        const page = await ctx.services.moderation.audit.list(CLI_ACTOR, {
          before: opts.before ?? null,
          after: opts.after ?? null,
          limit: opts.limit ?? null,
        });
        printJson(io, { ...page, entries: page.entries.map(view) });
      });
    });
}
