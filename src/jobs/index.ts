import type { Services } from '../services/index.js';
import { MINUTE_MS, type Clock } from '../lib/clock.js';

import type { Job } from './scheduler.js';

/** Every periodic job of the server. An area adds its job here. */
export function allJobs(ctx: { services: Services; clock: Clock }): Job[] {
  return [
    {
      // Spent or expired password reset tokens and proof-of-work records.
      name: 'registration-prune',
      intervalMs: 60 * MINUTE_MS,
      run: async () => {
        await ctx.services.passwordResets.pruneExpired();
        await ctx.services.registration.pruneExpired();
      },
    },
    {
      name: 'ip-block-expiry',
      intervalMs: 10 * MINUTE_MS,
      run: async () => {
        await ctx.services.ipBlocks.pruneExpired();
      },
    },
    {
      name: 'account-purge',
      intervalMs: 60 * MINUTE_MS,
      run: async () => {
        await ctx.services.accountDeletion.purgeDue(ctx.clock.now().getTime());
      },
    },
    {
      // Command audit rows older than SVC_AUDIT_RETENTION_DAYS; moderation rows are kept.
      name: 'audit-retention',
      intervalMs: 24 * 60 * MINUTE_MS,
      run: async () => {
        await ctx.services.moderation.pruneAudit();
      },
    },
    {
      // Invitations to encrypted conversations lapse after 30 days; reads ignore them already.
      name: 'conversation-invite-expiry',
      intervalMs: 60 * MINUTE_MS,
      run: async () => {
        await ctx.services.conversations.invitations.purgeExpiredInvites();
      },
    },
    {
      // MLS key packages that can no longer be handed out or matched (docs/e2ee.md).
      name: 'mls-key-package-prune',
      intervalMs: 60 * MINUTE_MS,
      run: async () => {
        await ctx.services.mls.keyPackages.prune();
      },
    },
    {
      // Attachments never finalized, a day after their creation (docs/files.md).
      name: 'attachment-expiry',
      intervalMs: 60 * MINUTE_MS,
      run: async () => {
        await ctx.services.attachments.expireUnfinalized();
      },
    },
    {
      // Blobs no row names any more, and temporary files left by a crash (docs/files.md).
      name: 'blob-sweep',
      intervalMs: 60 * MINUTE_MS,
      run: async () => {
        await ctx.services.files.sweep();
      },
    },
    {
      // Messages sent before the search index existed, 20 batches of 500 a run, until none is
      // left (docs/search.md, "Rebuilding"); a no-op query once done.
      name: 'search-backfill',
      intervalMs: 15_000,
      run: async () => {
        await ctx.services.search.backfill(20, 500);
      },
    },
    {
      // Reminders set with /remind, and spent confirmations (docs/commands.md).
      name: 'command-reminders',
      intervalMs: 30_000,
      run: async () => {
        await ctx.services.commands.reminders.postDue();
      },
    },
    {
      // Scheduled pipelines; each due run is claimed once across processes.
      name: 'command-pipelines',
      intervalMs: 60_000,
      run: async () => {
        await ctx.services.commands.pipelines.runDue();
      },
    },
    {
      // Mail digests of unread notifications, while `email` is enabled (docs/notifications.md).
      name: 'notification-digest',
      intervalMs: 5 * MINUTE_MS,
      run: async () => {
        await ctx.services.digests.run();
      },
    },
    {
      // Notifications older than 90 days (docs/notifications.md, "The feed").
      name: 'notification-retention',
      intervalMs: 24 * 60 * MINUTE_MS,
      run: async () => {
        await ctx.services.notifications.pruneOld();
      },
    },
  ];
}
