import type {
  NotificationKindValue,
  NotificationLevelValue,
  NotificationRuleTable,
  NotificationSettingTable,
} from '../../db/tables/notifications.js';
import { validation } from '../../errors.js';

// The rules of who is notified (docs/notifications.md). Pure.

export const LEVELS: readonly NotificationLevelValue[] = ['all', 'mentions', 'nothing'];
export const MAX_KEYWORDS = 25;
export const MAX_KEYWORD_LENGTH = 64;

/** The settings of someone who never changed any. */
export function defaultSetting(accountId: string, now: number): NotificationSettingTable {
  return {
    accountId,
    level: 'mentions',
    keywords: '[]',
    timeZone: 'UTC',
    quietStart: null,
    quietEnd: null,
    dndUntil: null,
    emailDigests: 1,
    lastDigestAt: null,
    updatedAt: now,
  };
}

/** Stronger reasons first: a person mentioned by name and by @channel is told of the name. */
const RANK: Record<NotificationKindValue, number> = {
  mention: 0,
  channel: 1,
  keyword: 2,
  thread_reply: 3,
  direct: 4,
  message: 5,
};

export function stronger(a: NotificationKindValue, b: NotificationKindValue | undefined) {
  return b === undefined || RANK[a] < RANK[b];
}

const mutedNow = (rule: NotificationRuleTable | undefined, now: number) =>
  rule?.mutedUntil !== null && rule?.mutedUntil !== undefined && rule.mutedUntil > now;

/**
 * The level that applies to one person in one conversation: the conversation's rule (muted is
 * `nothing`), else for a direct or group conversation `all` (unless the person's default is
 * `nothing`), else the workspace's rule, else the person's default (`mentions` by default).
 */
export function effectiveLevel(
  setting: NotificationSettingTable | undefined,
  conversationRule: NotificationRuleTable | undefined,
  workspaceRule: NotificationRuleTable | undefined,
  conversationKind: string,
  now: number,
): NotificationLevelValue {
  const global = setting?.level ?? 'mentions';
  if (mutedNow(conversationRule, now)) return 'nothing';
  if (conversationRule?.level) return conversationRule.level;
  if (conversationKind !== 'channel') return global === 'nothing' ? 'nothing' : 'all';
  if (mutedNow(workspaceRule, now)) return 'nothing';
  if (workspaceRule?.level) return workspaceRule.level;
  return global;
}

/** Whether a notification of `kind` is made under `level`. */
export function levelAllows(level: NotificationLevelValue, kind: NotificationKindValue): boolean {
  if (level === 'nothing') return false;
  if (level === 'all') return true;
  return kind !== 'message' && kind !== 'direct';
}

/** Keywords as stored: trimmed, lower case, unique, at most 25 of at most 64 characters. */
export function checkKeywords(value: unknown): string[] {
  if (!Array.isArray(value)) throw validation('keywords must be a list of words');
  const out = new Set<string>();
  for (const k of value) {
    if (typeof k !== 'string') throw validation('each keyword must be a string');
    const word = k.trim().toLowerCase();
    if (word === '') continue;
    if ([...word].length > MAX_KEYWORD_LENGTH) {
      throw validation(`a keyword has at most ${MAX_KEYWORD_LENGTH} characters`);
    }
    out.add(word);
  }
  if (out.size > MAX_KEYWORDS) throw validation(`at most ${MAX_KEYWORDS} keywords`);
  return [...out];
}

export function readKeywords(json: string): string[] {
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? v.filter((k): k is string => typeof k === 'string') : [];
  } catch {
    return [];
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `text` holds one of the keywords as a whole word (case-insensitive). */
export function matchesKeyword(text: string, keywords: readonly string[]): boolean {
  if (keywords.length === 0) return false;
  const folded = text.toLowerCase();
  return keywords.some((k) =>
    new RegExp(`(?<![\\p{L}\\p{N}_])${escape(k)}(?![\\p{L}\\p{N}_])`, 'u').test(folded),
  );
}

/** A valid IANA time zone name, or VALIDATION. */
export function checkTimeZone(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) {
    throw validation('timeZone must be an IANA time zone name such as Europe/Paris');
  }
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    throw validation(`unknown time zone "${value}": use an IANA name such as Europe/Paris`);
  }
}

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** `HH:MM` (24-hour) as minutes after midnight, or VALIDATION. */
export function checkClockTime(value: unknown, field: string): number {
  const m = typeof value === 'string' ? HHMM.exec(value) : null;
  if (!m) throw validation(`${field} must be a time of day as HH:MM (24-hour), e.g. 22:00`);
  return Number(m[1]) * 60 + Number(m[2]);
}

export function formatClockTime(minutes: number): string {
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
}

/** Minutes after local midnight at `now` in `timeZone`. */
export function localMinutes(now: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(now));
  const h = Number(parts.find((p) => p.type === 'hour')?.value ?? 0);
  const m = Number(parts.find((p) => p.type === 'minute')?.value ?? 0);
  return h * 60 + m;
}

/**
 * Do not disturb: until `dndUntil`, or inside the quiet hours in the person's time zone (a span
 * may pass midnight: 22:00 to 07:00). Push is held back then; the feed still fills.
 */
export function doNotDisturb(setting: NotificationSettingTable | undefined, now: number): boolean {
  if (!setting) return false;
  if (setting.dndUntil !== null && setting.dndUntil > now) return true;
  const { quietStart: start, quietEnd: end } = setting;
  if (start === null || end === null || start === end) return false;
  const t = localMinutes(now, setting.timeZone);
  return start < end ? t >= start && t < end : t >= start || t < end;
}
