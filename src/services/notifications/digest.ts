import { createHmac, timingSafeEqual } from 'node:crypto';

import type { Logger } from 'pino';

import type { Db } from '../../db/database.js';
import type { Mailer } from '../../mail/mailer.js';
import type { Clock } from '../../lib/clock.js';
import { isId } from '../../lib/ids.js';

import type { ConnectedPort } from './push.js';
import { findSetting, updateDigestState } from './queries.js';
import {
  claimDigest,
  digestCandidates,
  digestItems,
  markMailed,
  releaseDigest,
} from './digest-queries.js';
import { defaultSetting, doNotDisturb } from './rules.js';

export interface DigestDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  mailer: Mailer;
  /** Whether the `email` feature is enabled (an unavailable one still runs, and logs mail). */
  emailEnabled: boolean;
  /** SVC_NOTIFY_DIGEST_AWAY_MINUTES: how long a notification waits unread before it is mailed. */
  awayMs: number;
  /** SVC_NOTIFY_DIGEST_INTERVAL_MINUTES: at most one digest per person per interval. */
  intervalMs: number;
  /** SVC_PUBLIC_BASE_URL, for the links in the mail. */
  publicBaseUrl: string | null;
  /** The server's cookie secret; the unsubscribe token's key is derived from it. */
  secret: Buffer;
  connections: ConnectedPort;
}

/** People mailed per run; the next run goes on. */
const PEOPLE_PER_RUN = 200;
/** Notifications listed in one digest; the mail says how many more wait. */
const ITEMS_PER_DIGEST = 30;
const EXCERPT = 200;

/**
 * Mail digests of unread notifications (docs/notifications.md, "Mail digests"). A run (the
 * `notification-digest` job, once across processes) mails each person whose oldest unmailed,
 * unread notification has waited `awayMs`, who has no open connection, is not in
 * do-not-disturb, wants digests and was not mailed within `intervalMs`. Each notification is
 * mailed at most once. Encrypted conversations appear by metadata only.
 */
export class DigestMailer {
  private readonly tokenKey: Buffer;

  constructor(private readonly deps: DigestDeps) {
    this.tokenKey = createHmac('sha256', deps.secret)
      .update('svc notification unsubscribe')
      .digest();
  }

  /** The signed token of the unsubscribe link: the account id and its HMAC. */
  unsubscribeToken(accountId: string): string {
    const mac = createHmac('sha256', this.tokenKey).update(accountId).digest('base64url');
    return `${Buffer.from(accountId).toString('base64url')}.${mac}`;
  }

  /** The account a token names, or null for a forged or malformed one. */
  verifyToken(token: unknown): string | null {
    if (typeof token !== 'string' || token.length > 200) return null;
    const [idPart, mac] = token.split('.');
    if (!idPart || !mac) return null;
    const accountId = Buffer.from(idPart, 'base64url').toString();
    if (!isId(accountId)) return null;
    const expected = Buffer.from(this.unsubscribeToken(accountId).split('.')[1] as string);
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected) ? accountId : null;
  }

  /** Turns digests off for the token's account; false for a bad token. No session needed. */
  async unsubscribe(token: unknown): Promise<boolean> {
    const accountId = this.verifyToken(token);
    if (!accountId) return false;
    const exists = await this.deps.db.kysely
      .selectFrom('account')
      .select('id')
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (!exists) return false;
    const now = this.deps.clock.now().getTime();
    await this.deps.db.transaction((tx) =>
      updateDigestState(tx.db, { emailDigests: 0 }, defaultSetting(accountId, now)),
    );
    return true;
  }

  /**
   * An absolute link from SVC_PUBLIC_BASE_URL, or null without it: a relative link in a mail
   * leads nowhere (the server warns at boot that mail links need the variable).
   */
  private link(path: string): string | null {
    const base = this.deps.publicBaseUrl;
    return base ? `${base.replace(/\/+$/, '')}${path}` : null;
  }

  /** One run of the job; the number of digests sent. Nothing while `email` is disabled. */
  async run(): Promise<number> {
    if (!this.deps.emailEnabled) return 0;
    const now = this.deps.clock.now().getTime();
    const candidates = await digestCandidates(
      this.deps.db.kysely,
      now - this.deps.awayMs,
      now - this.deps.intervalMs,
      PEOPLE_PER_RUN,
    );
    let sent = 0;
    for (const { accountId, email } of candidates) {
      const setting = await findSetting(this.deps.db.kysely, accountId);
      if (
        setting?.lastDigestAt !== null &&
        setting?.lastDigestAt !== undefined &&
        now - setting.lastDigestAt < this.deps.intervalMs
      ) {
        continue;
      }
      if (doNotDisturb(setting, now)) continue;
      if (await this.deps.connections.isConnected(accountId)) continue;
      try {
        if (await this.mailOne(accountId, email, now)) sent++;
      } catch (err) {
        // The next run tries again: nothing was marked mailed.
        this.deps.log.warn({ err }, 'notification digest not sent');
      }
    }
    return sent;
  }

  private async mailOne(accountId: string, email: string, now: number): Promise<boolean> {
    const items = await digestItems(this.deps.db.kysely, accountId, now, ITEMS_PER_DIGEST + 1);
    if (items.length === 0) return false;
    const shown = items.slice(0, ITEMS_PER_DIGEST);
    const lines = shown.map((i) => {
      const who = i.actorUsername ? `@${i.actorUsername}` : 'Someone';
      const where =
        i.conversationKind === 'channel'
          ? `#${i.conversationName ?? 'channel'} (${i.workspaceName})`
          : i.conversationKind === 'group'
            ? 'a group conversation'
            : 'a direct message';
      const when = new Date(Number(i.createdAt)).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const what = WHAT[i.kind] ?? 'wrote';
      // Never the content of an encrypted conversation: the server does not have it anyway,
      // and the line says only that something arrived.
      const body = i.encrypted === 1 || i.text === null ? '(encrypted message)' : excerpt(i.text);
      return `- ${when} ${who} ${what} in ${where}:\n  ${body}`;
    });
    const more = items.length > ITEMS_PER_DIGEST ? '\nMore are waiting for you.\n' : '';
    const unsubscribe = this.link(
      `/api/notifications/unsubscribe?token=${encodeURIComponent(this.unsubscribeToken(accountId))}`,
    );
    const text = [
      'While you were away:',
      '',
      ...lines,
      more,
      `Open ${this.link('/') ?? 'the app'} to read and reply.`,
      '',
      ...(unsubscribe ? [`To stop these mails: ${unsubscribe}`] : []),
      unsubscribe
        ? 'You can also change which mails you get in your notification settings.'
        : 'To stop these mails, turn off mail digests in your notification settings.',
    ].join('\n');
    const count = shown.length;
    const ids = shown.map((i) => i.id);
    const previous = (await findSetting(this.deps.db.kysely, accountId))?.lastDigestAt ?? null;
    let claimed = false;
    await this.deps.db.transaction(async (tx) => {
      claimed = await claimDigest(tx.db, defaultSetting(accountId, now), now, this.deps.intervalMs);
      if (claimed) await markMailed(tx.db, accountId, ids, now);
    });
    if (!claimed) return false;
    try {
      await this.deps.mailer.send({
        to: email,
        subject: `${count} unread notification${count === 1 ? '' : 's'} while you were away`,
        text,
        // One-click unsubscribe needs an absolute https or http URL (RFC 8058).
        ...(unsubscribe
          ? {
              headers: {
                'List-Unsubscribe': `<${unsubscribe}>`,
                'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
              },
            }
          : {}),
      });
    } catch (err) {
      // Not sent: the next run tries again with the same notifications.
      await this.deps.db.transaction((tx) => releaseDigest(tx.db, accountId, previous, ids));
      throw err;
    }
    return true;
  }
}

const WHAT: Record<string, string> = {
  mention: 'mentioned you',
  channel: 'notified everyone',
  keyword: 'used one of your keywords',
  thread_reply: 'replied in a thread you follow',
  direct: 'wrote to you',
  message: 'wrote',
};

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  const chars = [...flat];
  return chars.length > EXCERPT ? `${chars.slice(0, EXCERPT - 1).join('')}…` : flat;
}
