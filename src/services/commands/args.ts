import type { Executor } from '../../db/database.js';
import { AppError, validation } from '../../errors.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../lib/clock.js';
import { isId } from '../../lib/ids.js';
import { findAccountById, findAccountByUsernameKey, lookupKey } from '../accounts/index.js';

import { parseDuration } from './builtins.js';
import type { ArgDef, Args } from './types.js';

/** Strings without their own maximum: at most this many characters. */
export const ARG_STRING_MAX = 4000;

const bad = (arg: string, why: string) =>
  new AppError('VALIDATION', `${arg}: ${why}`, { argument: arg });

/**
 * Checks arguments against the command's types and ranges: VALIDATION whose message starts with
 * the argument's name (and whose `argument` extension names it) for an unknown one, a missing
 * required one, a value of the wrong type or out of range. Text arguments take only strings;
 * numbers and booleans take their JSON value or its text (`"5"`, `"true"`), as the message box
 * and a macro's `{{param}}` give them. `user` takes an account id or `@username` and answers the
 * id; `duration` takes `10m`, `2h`, `1d`, `1w` and answers ms.
 */
export async function checkArgs(
  db: Executor,
  defs: readonly ArgDef[],
  input: unknown,
  labels: Record<string, string> = {},
): Promise<Args> {
  if (input === null || input === undefined) input = {};
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw validation('args must be an object of argument names to values');
  }
  const given = input as Record<string, unknown>;
  for (const name of Object.keys(given)) {
    if (!defs.some((d) => d.name === name)) {
      throw bad(name, `this command takes no argument "${name}"`);
    }
  }
  const out: Args = {};
  for (const d of defs) {
    const raw = given[d.name];
    if (raw === undefined || raw === null || raw === '') {
      if (d.required) throw bad(d.name, `is required (${d.description})`);
      out[d.name] = null;
      continue;
    }
    out[d.name] = await checkOne(db, d, raw, (label) => (labels[d.name] = label));
  }
  return out;
}

async function checkOne(
  db: Executor,
  d: ArgDef,
  raw: unknown,
  label: (text: string) => void,
): Promise<string | number | boolean> {
  switch (d.type) {
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === 'false') return raw === 'true';
      throw bad(d.name, 'must be true or false');
    case 'integer':
    case 'number': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : NaN;
      if (!Number.isFinite(n) || (d.type === 'integer' && !Number.isInteger(n))) {
        throw bad(d.name, `must be ${d.type === 'integer' ? 'a whole number' : 'a number'}`);
      }
      if ((d.min !== undefined && n < d.min) || (d.max !== undefined && n > d.max)) {
        throw bad(d.name, `must be from ${d.min ?? '-∞'} to ${d.max ?? '∞'}`);
      }
      return n;
    }
    case 'duration': {
      const ms = typeof raw === 'string' ? parseDuration(raw) : null;
      if (ms === null || ms <= 0) throw bad(d.name, 'must be a duration such as 10m, 2h, 1d or 1w');
      if ((d.min !== undefined && ms < d.min) || (d.max !== undefined && ms > d.max)) {
        throw bad(
          d.name,
          `must be from ${spell(d.min ?? MINUTE_MS)} to ${d.max === undefined ? 'any length' : spell(d.max)}`,
        );
      }
      return ms;
    }
    case 'user': {
      if (typeof raw !== 'string') throw bad(d.name, 'must be @username or a user id');
      const s = raw.trim();
      const name = s.startsWith('@') ? s.slice(1) : s;
      const row = isId(s.toLowerCase())
        ? await findAccountById(db, s.toLowerCase())
        : name
          ? await findAccountByUsernameKey(db, lookupKey(name))
          : undefined;
      if (!row || row.deletedAt !== null) throw bad(d.name, `no user "${s}"`);
      label(`@${row.username}`);
      return row.id;
    }
    case 'channel':
    case 'message': {
      if (typeof raw !== 'string' || !isId(raw.trim().toLowerCase())) {
        throw bad(d.name, `must be the id of a ${d.type}`);
      }
      return raw.trim().toLowerCase();
    }
    default: {
      if (typeof raw !== 'string') throw bad(d.name, 'must be text (a string)');
      const s = raw;
      const max = d.maxLength ?? ARG_STRING_MAX;
      if ([...s].length > max) throw bad(d.name, `must be at most ${max} characters`);
      return s;
    }
  }
}

/** A duration in the largest whole unit: `28 days`, `1 minute`. */
function spell(ms: number): string {
  const units: Array<[number, string]> = [
    [DAY_MS, 'day'],
    [HOUR_MS, 'hour'],
  ];
  const [per, unit] = units.find(([u]) => ms % u === 0) ?? [MINUTE_MS, 'minute'];
  const n = Math.round(ms / per);
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/**
 * The message-box form: the words after `/name` as the arguments in order. Each argument takes one
 * word (or a "quoted phrase"); the last argument takes the rest of the line when it is text.
 * `/remind 10m water the plants` gives `{ in: '10m', text: 'water the plants' }`.
 */
export function parseLine(defs: readonly ArgDef[], line: unknown): Record<string, string> {
  if (typeof line !== 'string') throw validation('text: the words after the command name');
  if ([...line].length > ARG_STRING_MAX * 2) {
    throw validation(`text: at most ${ARG_STRING_MAX * 2} characters`, { argument: 'text' });
  }
  const out: Record<string, string> = {};
  let rest = line.trim();
  for (const [i, d] of defs.entries()) {
    if (rest === '') break;
    const last = i === defs.length - 1;
    if (last && (d.type === 'text' || d.type === 'string')) {
      out[d.name] = rest.replace(/^"(.*)"$/s, '$1');
      rest = '';
      break;
    }
    const m = /^"([^"]*)"\s*|^(\S+)\s*/.exec(rest)!;
    out[d.name] = m[1] ?? m[2]!;
    rest = rest.slice(m[0].length);
  }
  if (rest !== '') {
    throw validation(
      `text: too many words; this command takes ${defs.map((d) => d.name).join(', ') || 'no arguments'}`,
      {
        argument: 'text',
      },
    );
  }
  return out;
}

const SECRET_NAME = /pass(word)?|secret|token|key|credential/i;

/** Arguments as the audit keeps them: `secret`-typed ones and secret-looking names redacted. */
export function redactArgs(
  defs: readonly ArgDef[],
  args: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    const d = defs.find((x) => x.name === name);
    const secret = d?.type === 'secret' || SECRET_NAME.test(name);
    out[name] = secret && value !== null ? '[redacted]' : value;
  }
  return out;
}

/** Stable JSON (sorted keys) for binding a confirmation to its arguments. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
    .join(',')}}`;
}
