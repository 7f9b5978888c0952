import type { Command } from 'commander';

import { CLI_ACTOR } from '../auth/actor.js';
import type { ReportView } from '../services/moderation/reports.js';

import { printJson, withContext, type CliIo } from './io.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const view = (r: ReportView) => ({
  ...r,
  createdAt: iso(r.createdAt),
  resolvedAt: iso(r.resolvedAt),
  snapshot: {
    ...r.snapshot,
    ...(r.snapshot.messageCreatedAt !== undefined
      ? { messageCreatedAt: iso(r.snapshot.messageCreatedAt) }
      : {}),
    ...(r.snapshot.messageEditedAt !== undefined
      ? { messageEditedAt: iso(r.snapshot.messageEditedAt) }
      : {}),
  },
});

export function registerAbuseReportCommands(program: Command, io: CliIo): void {
  const reports = program
    .command('abuse-reports')
    .description('abuse reports users filed (the instanceReports queue)');
  reports
    .command('list')
    .description('list reports, oldest first (every report, up to 500 a page)')
    .option('--open', 'only reports no operator has resolved')
    .option('--after <cursor>', "continue after this report's cursor")
    .action(async (opts: { open?: boolean; after?: string }) => {
      await withContext(io, async (ctx) => {
        const list = await ctx.services.moderation.reports.listInstance(CLI_ACTOR, {
          openOnly: opts.open === true,
          after: opts.after ?? null,
          limit: 500,
        });
        printJson(io, list.map(view));
      });
    });
  reports
    .command('resolve <id>')
    .description('mark a report resolved (written to the audit log)')
    .action(async (id: string) => {
      await withContext(io, async (ctx) =>
        printJson(io, view(await ctx.services.moderation.reports.resolveInstance(CLI_ACTOR, id))),
      );
    });
}
