import type { Command } from 'commander';

import { registerAccountPurgeCommand } from './account-purge-commands.js';
import { printJson, withDatabase, type CliIo } from './io.js';

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
      // Only the database and the accounts' creation: no keys, events or other services.
      const [{ createPasswordAccount }, { systemClock }] = await Promise.all([
        import('../services/accounts/creation.js'),
        import('../lib/clock.js'),
      ]);
      await withDatabase(io, async ({ db }) => {
        const created = await createPasswordAccount(db, systemClock, {
          username,
          password,
          email: opts.email ?? null,
        });
        printJson(io, { id: created.id, username: created.username, email: created.email });
      });
    });
}
