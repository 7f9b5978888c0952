import type { AppContext } from '../context.js';
import { MINUTE_MS } from '../lib/clock.js';

import type { Job } from './scheduler.js';

/** Every periodic job of the server. An area adds its job here. */
export function allJobs(ctx: AppContext): Job[] {
  return [
    {
      name: 'ip-block-expiry',
      intervalMs: 10 * MINUTE_MS,
      run: async () => {
        await ctx.services.ipBlocks.pruneExpired();
      },
    },
  ];
}
