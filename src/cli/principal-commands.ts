import type { Command } from 'commander';

import { CLI_ACTOR } from '../auth/actor.js';
import type { PrincipalBlockView } from '../services/moderation/principal-blocks.js';

import { printJson, withContext, type CliIo } from './io.js';

const view = (b: PrincipalBlockView) => ({ ...b, createdAt: new Date(b.createdAt).toISOString() });

export function registerPrincipalCommands(program: Command, io: CliIo): void {
  const principal = program
    .command('principal')
    .description(
      'block accounts, key identities, servers and remote people: user:<accountId>, @<username>, key:<keyIdentityId>, server:<host>, remote:<username>@<host>',
    );
  principal
    .command('list')
    .description('list blocked principals, newest first')
    .action(async () => {
      await withContext(io, async (ctx) =>
        printJson(io, (await ctx.services.moderation.blocks.list(CLI_ACTOR)).map(view)),
      );
    });
  principal
    .command('block <principalId>')
    .description('block a principal: ends its sessions and refuses its sign-ins and signups')
    .option('--reason <reason>', 'why, for the audit log (at most 500 characters)')
    .option(
      '--cascade',
      'also remove every message it posted, its reactions, and the workspaces it owns',
    )
    .action(async (principalId: string, opts: { reason?: string; cascade?: boolean }) => {
      await withContext(io, async (ctx) => {
        const result = await ctx.services.moderation.blocks.block(CLI_ACTOR, {
          principalId,
          reason: opts.reason ?? null,
          cascade: opts.cascade === true,
        });
        printJson(io, { ...result, block: view(result.block) });
      });
    });
  principal
    .command('unblock <principalId>')
    .description('lift a block (removed content stays removed)')
    .action(async (principalId: string) => {
      await withContext(io, async (ctx) =>
        printJson(io, view(await ctx.services.moderation.blocks.unblock(CLI_ACTOR, principalId))),
      );
    });
}
