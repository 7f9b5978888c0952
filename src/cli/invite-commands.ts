import { InvalidArgumentError, type Command } from 'commander';

import { CLI_ACTOR } from '../auth/actor.js';
import type { InstanceInviteView } from '../services/registration/registration-service.js';
import { printJson, withContext, type CliIo } from './io.js';

const wholeNumber = (value: string): number => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
};

/** `svc invite create|list|revoke`: instance invites, the same service as the GraphQL roots. */
export function registerInviteCommands(program: Command, io: CliIo): void {
  const invite = program.command('invite').description('manage instance invites (signup tokens)');
  invite
    .command('create')
    .description('create an instance invite and print its token (shown only once)')
    .option('--email <email>', 'bind the invite to this address; the new account gets it')
    .option('--expires-in-days <days>', 'days until it expires (default 7)', wholeNumber)
    .option('--max-uses <n>', 'how many accounts it may create (default 1)', wholeNumber)
    .action(async (opts: { email?: string; expiresInDays?: number; maxUses?: number }) => {
      await withContext(io, async (ctx) => {
        const { invite: created, token } = await ctx.services.registration.createInstanceInvite(
          CLI_ACTOR,
          { email: opts.email, expiresInDays: opts.expiresInDays, maxUses: opts.maxUses },
        );
        printJson(io, { ...view(created), token });
      });
    });
  invite
    .command('list')
    .description('list instance invites, newest first')
    .action(async () => {
      await withContext(io, async (ctx) => {
        const invites = await ctx.services.registration.listInstanceInvites(CLI_ACTOR);
        printJson(io, invites.map(view));
      });
    });
  invite
    .command('revoke <id>')
    .description('revoke an instance invite')
    .action(async (id: string) => {
      await withContext(io, async (ctx) => {
        const revoked = await ctx.services.registration.revokeInstanceInvite(CLI_ACTOR, id);
        printJson(io, { id, revoked });
      });
    });
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function view(i: InstanceInviteView) {
  return {
    id: i.id,
    email: i.email,
    createdBy: i.createdBy,
    createdAt: iso(i.createdAt),
    expiresAt: iso(i.expiresAt),
    maxUses: i.maxUses,
    uses: i.uses,
    revokedAt: iso(i.revokedAt),
  };
}
