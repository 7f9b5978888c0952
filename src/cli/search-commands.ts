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
      'rebuild the search index from the messages, oldest first, one short transaction per batch: safe while the server runs, which keeps answering from the rows not yet rewritten; a stopped rebuild resumes where it stopped',
    )
    .option('--batch <n>', 'messages per transaction (1 to 5000)', batchSize, 500)
    .option('--quiet', 'no progress lines on standard error')
    .action(async (opts: { batch: number; quiet?: boolean }) => {
      await withContext(io, async (ctx) => {
        const started = Date.now();
        let shown = 0;
        const messages = await ctx.services.search.reindex(
          CLI_ACTOR,
          opts.batch,
          ({ done, total, resumed }) => {
            // A line a second at most, and the last one.
            const now = Date.now();
            if (opts.quiet || (now - shown < 1000 && done < total)) return;
            shown = now;
            const pct = total === 0 ? 100 : Math.min(100, Math.floor((done / total) * 100));
            const rate = Math.round(done / Math.max(0.001, (now - started) / 1000));
            io.err(
              `search reindex${resumed ? ' (resumed)' : ''}: ${done} of ${total} messages (${pct}%), ${rate}/s\n`,
            );
          },
        );
        printJson(io, { messages });
      });
    });
}
