import { InvalidArgumentError, type Command } from 'commander';

import { CLI_ACTOR } from '../auth/actor.js';
import { printJson, withContext, type CliIo } from './io.js';

const view = (b: {
  cidr: string;
  reason: string | null;
  createdAt: number;
  expiresAt: number | null;
  createdBy: string;
}) => ({
  cidr: b.cidr,
  reason: b.reason,
  createdAt: new Date(b.createdAt).toISOString(),
  expiresAt: b.expiresAt === null ? null : new Date(b.expiresAt).toISOString(),
  createdBy: b.createdBy,
});

/** Parses --expires-in-days; a bad value is a usage error (exit 2), as commander reports it. */
function days(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 36500) {
    throw new InvalidArgumentError('expected a whole number of days from 1 to 36500');
  }
  return Number(value);
}

export function registerIpCommands(program: Command, io: CliIo): void {
  const ip = program.command('ip').description('the IP address deny list');
  ip.command('list')
    .description('list blocked addresses and ranges, newest first')
    .action(async () => {
      await withContext(io, async (ctx) =>
        printJson(io, (await ctx.services.ipBlocks.list(CLI_ACTOR)).map(view)),
      );
    });
  ip.command('block <cidr>')
    .description('block an address or CIDR range on every route but /healthz')
    .option('--reason <reason>', 'why, for the audit log')
    .option('--expires-in-days <n>', 'lift the block after this many days (1 to 36500)', days)
    .action(async (cidr: string, opts: { reason?: string; expiresInDays?: number }) => {
      await withContext(io, async (ctx) => {
        const block = await ctx.services.ipBlocks.block(CLI_ACTOR, {
          cidr,
          reason: opts.reason ?? null,
          expiresInDays: opts.expiresInDays ?? null,
        });
        printJson(io, view(block));
      });
    });
  ip.command('unblock <cidr>')
    .description('lift the block of an address or range')
    .action(async (cidr: string) => {
      await withContext(io, async (ctx) =>
        printJson(io, view(await ctx.services.ipBlocks.unblock(CLI_ACTOR, cidr))),
      );
    });
}
