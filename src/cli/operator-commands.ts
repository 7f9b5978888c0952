import type { Command } from 'commander';

import { CLI_ACTOR } from '../auth/actor.js';
import { printJson, withContext, type CliIo } from './io.js';

export function registerOperatorCommands(program: Command, io: CliIo): void {
  const operator = program
    .command('operator')
    .description('grant or revoke the instance operator role');
  for (const [name, grant] of [
    ['grant', true],
    ['revoke', false],
  ] as const) {
    operator
      .command(`${name} <username>`)
      .description(
        grant ? 'make an account an instance operator' : 'take the instance operator role away',
      )
      .action(async (username: string) => {
        await withContext(io, async (ctx) => {
          const account = await ctx.services.accounts.setOperatorByUsername(
            CLI_ACTOR,
            username,
            grant,
          );
          printJson(io, {
            id: account.id,
            username: account.username,
            instanceOperator: account.isOperator,
          });
        });
      });
  }
}
