import { InvalidArgumentError, type Command } from 'commander';

import { CLI_ACTOR } from '../auth/actor.js';
import { printJson, withContext, type CliIo } from './io.js';

/** Parses --batch; a bad value is a usage error (exit 2), as commander reports it. */
function batchSize(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 5000) {
    throw new InvalidArgumentError('expected a whole number of messages from 1 to 5000');
  }
  return Number(value);
}

export function registerSearchCommands(program: Command, io: CliIo): void {
  const search = program.command('search').description('the message search index');
  search
    .command('reindex')
    .description(
      'rebuild the search index from the messages, oldest first, one short transaction per batch (safe while the server runs)',
    )
    .option('--batch <n>', 'messages per transaction (1 to 5000)', batchSize, 500)
    .action(async (opts: { batch: number }) => {
      await withContext(io, async (ctx) => {
        const messages = await ctx.services.search.reindex(CLI_ACTOR, opts.batch);
        printJson(io, { messages });
      });
    });
}
