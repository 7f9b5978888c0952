import type { Command } from 'commander';

import { CLI_ACTOR } from '../auth/actor.js';
import { printJson, withContext, type CliIo } from './io.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** `svc session list|end`: any account's sessions, for the operator (docs/cli.md). */
export function registerSessionCommands(program: Command, io: CliIo): void {
  const session = program.command('session').description("list and end any account's sessions");
  session
    .command('list <username>')
    .description('list the live sessions of an account, newest first')
    .action(async (username: string) => {
      await withContext(io, async (ctx) => {
        const { account, sessions } = await ctx.services.accounts.sessionsOf(CLI_ACTOR, username);
        printJson(io, {
          account: { id: account.id, username: account.username },
          sessions: sessions.map((s) => ({
            id: s.id,
            deviceId: s.deviceId,
            createdAt: iso(s.createdAt),
            expiresAt: iso(s.expiresAt),
            ip: s.ip,
            userAgent: s.userAgent,
          })),
        });
      });
    });
  session
    .command('end <username>')
    .description('end every live session of an account (it must sign in again), or one')
    .option('--session <id>', 'end only this session (an id from `svc session list`)')
    .action(async (username: string, opts: { session?: string }) => {
      await withContext(io, async (ctx) => {
        const ended = await ctx.services.accounts.endSessionsOf(CLI_ACTOR, username, opts.session);
        printJson(io, { ended });
      });
    });
}
