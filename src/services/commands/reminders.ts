import type { Logger } from 'pino';

import { personWithoutSession, type DelegatedActor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import { AppError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { findAccountById } from '../accounts/index.js';
import type { MessageService } from '../messages/index.js';

import { claimReminder, dueReminders, pruneConfirmations } from './queries.js';
import { CONFIRMATION_TTL_MS } from './confirmations.js';

/** Reminders posted per job run; the next run continues. */
const REMINDER_BATCH = 200;

/**
 * Reminders set with /remind: rows, so they survive restarts, posted by a job when due. A reminder
 * is claimed (its row deleted) before it is posted, so across processes each posts once; a crash
 * between the two loses that one reminder rather than posting it twice. It posts as its author
 * with the author's rights at that moment: someone who left the conversation gets no reminder.
 */
export class Reminders {
  constructor(
    private readonly deps: { db: Db; clock: Clock; log: Logger; messages: MessageService },
  ) {}

  /** Posts every due reminder; answers how many were posted. */
  async postDue(): Promise<number> {
    const now = this.deps.clock.now().getTime();
    let posted = 0;
    for (const r of await dueReminders(this.deps.db.kysely, now, REMINDER_BATCH)) {
      const mine = await this.deps.db.transaction((tx) => claimReminder(tx.db, r.id));
      if (!mine) continue;
      const owner = await findAccountById(this.deps.db.kysely, r.accountId);
      if (!owner || owner.deletedAt !== null) continue;
      const person = personWithoutSession(owner);
      const actor: DelegatedActor = {
        kind: 'pipeline',
        onBehalfOf: person,
        grant: { id: `reminder:${r.id}`, actions: ['message:post'] },
      };
      try {
        await this.deps.messages.sending.send(actor, {
          conversationId: r.conversationId,
          text: `⏰ Reminder: ${r.text}`,
        });
        posted++;
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        this.deps.log.info({ reminderId: r.id, code: err.code }, 'reminder not posted');
      }
    }
    // Confirmations a day past their expiry (a replay within the day still reads as stale).
    await this.deps.db.transaction((tx) =>
      pruneConfirmations(tx.db, now - CONFIRMATION_TTL_MS - 24 * 60 * 60 * 1000),
    );
    return posted;
  }
}
