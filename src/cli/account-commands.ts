import type { Command } from 'commander';

import { registerAccountPurgeCommand } from './account-purge-commands.js';
import { printJson, withContext, type CliIo } from './io.js';

export function registerAccountCommands(program: Command, io: CliIo): void {
  const account = program.command('account').description('manage accounts');
  registerAccountPurgeCommand(account, io);
  account
    .command('create <username>')
    .description('create a password account; the password is read from standard input')
    .requiredOption('--password-stdin', 'read the password from standard input (required)')
    .option('--email <email>', 'the account email address')
    .action(async (username: string, opts: { email?: string }) => {
      const password = (await io.readStdin()).replace(/\r?\n$/, '');
      await withContext(io, async (ctx) => {
        const created = await ctx.services.accounts.createPasswordAccount({
          username,
          password,
          email: opts.email ?? null,
        });
        printJson(io, { id: created.id, username: created.username, email: created.email });
      });
    });
}
