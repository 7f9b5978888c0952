import { z } from 'zod';

import { normalizeCidr } from '../lib/address.js';

// Each reader turns one SVC_* string into a typed value, or fails with a message that says what
// is accepted; the variable's name is added by the loader. Unset and empty strings both mean
// "not set", so `SVC_X=` in a file behaves like leaving it out.

const unset = (v: unknown): boolean => v === undefined || v === '';

function int(opts: { min: number; max?: number }) {
  const accepted =
    opts.max === undefined
      ? `a whole number of at least ${opts.min}`
      : `a whole number from ${opts.min} to ${opts.max}`;
  return z.string().transform((raw, ctx) => {
    const trimmed = raw.trim();
    const n = /^-?\d+$/.test(trimmed) ? Number(trimmed) : NaN;
    if (!Number.isSafeInteger(n) || n < opts.min || (opts.max !== undefined && n > opts.max)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `expected ${accepted}, got "${raw}"` });
      return z.NEVER;
    }
    return n;
  });
}

/** A whole number with a default when unset. */
export const intWithDefault = (def: number, opts: { min: number; max?: number }) =>
  z.preprocess((v) => (unset(v) ? String(def) : v), int(opts));

/**
 * A limit that is off unless set to a number above 0: unset and 0 both give null.
 */
export const optionalLimit = (max?: number) =>
  z
    .preprocess(
      (v) => (unset(v) ? undefined : v),
      int({ min: 0, max })
        .transform((n) => (n === 0 ? null : n))
        .optional(),
    )
    .transform((v) => v ?? null);

/** A limit with a default that 0 turns off. */
export const limitWithDefault = (def: number, max?: number) =>
  intWithDefault(def, { min: 0, max }).transform((n) => (n === 0 ? null : n));

export const bool = (def: boolean) =>
  z.preprocess(
    (v) => (unset(v) ? String(def) : v),
    z.string().transform((raw, ctx) => {
      const s = raw.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(s)) return true;
      if (['false', '0', 'no', 'off'].includes(s)) return false;
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `expected true or false, got "${raw}"`,
      });
      return z.NEVER;
    }),
  );

export const optionalString = (maxLength?: number) =>
  z
    .preprocess(
      (v) => (unset(v) ? undefined : v),
      z
        .string()
        .refine((s) => maxLength === undefined || [...s].length <= maxLength, {
          message: `expected at most ${maxLength} characters`,
        })
        .optional(),
    )
    .transform((v) => v ?? null);

export const stringWithDefault = (def: string) =>
  z.preprocess((v) => (unset(v) ? def : v), z.string());

export function oneOf<const T extends readonly [string, ...string[]]>(values: T, def: T[number]) {
  return z.preprocess(
    (v) => (unset(v) ? def : typeof v === 'string' ? v.trim().toLowerCase() : v),
    z.string().transform((raw, ctx) => {
      if ((values as readonly string[]).includes(raw)) return raw as T[number];
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `expected one of ${values.join(', ')}, got "${raw}"`,
      });
      return z.NEVER;
    }),
  );
}

/** An absolute http(s) URL, or null when unset. */
export const optionalHttpUrl = () =>
  z
    .preprocess(
      (v) => (unset(v) ? undefined : v),
      z
        .string()
        .transform((raw, ctx) => {
          let url: URL;
          try {
            url = new URL(raw.trim());
          } catch {
            ctx.addIssue({
              code: z.ZodIssueCode.custom,
              message: `expected an absolute http:// or https:// URL, got "${raw}"`,
            });
            return z.NEVER;
          }
          if (url.protocol !== 'http:' && url.protocol !== 'https:') {
            ctx.addIssue({
              code: z.ZodIssueCode.custom,
              message: `expected an absolute http:// or https:// URL, got "${raw}"`,
            });
            return z.NEVER;
          }
          return url.toString();
        })
        .optional(),
    )
    .transform((v) => v ?? null);

/** A URL of one of the given schemes, kept as written; null when unset. */
export const optionalUrlOfScheme = (schemes: string[], what: string) =>
  z
    .preprocess(
      (v) => (unset(v) ? undefined : v),
      z
        .string()
        .transform((raw, ctx) => {
          try {
            const url = new URL(raw.trim());
            if (schemes.includes(url.protocol)) return raw.trim();
          } catch {
            // fall through to the issue below
          }
          ctx.addIssue({ code: z.ZodIssueCode.custom, message: `expected ${what}, got "${raw}"` });
          return z.NEVER;
        })
        .optional(),
    )
    .transform((v) => v ?? null);

/** `host:port` for a listener; null when unset. */
export const optionalListenAddr = () =>
  z
    .preprocess(
      (v) => (unset(v) ? undefined : v),
      z
        .string()
        .transform((raw, ctx) => {
          const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(raw.trim());
          const port = m ? Number(m[3]) : NaN;
          if (!m || port > 65535) {
            ctx.addIssue({
              code: z.ZodIssueCode.custom,
              message: `expected host:port such as 127.0.0.1:9090 or [::1]:9090, got "${raw}"`,
            });
            return z.NEVER;
          }
          return { host: (m[1] ?? m[2]) as string, port };
        })
        .optional(),
    )
    .transform((v) => v ?? null);

/** A comma-separated list of IP addresses or CIDR ranges; empty when unset. */
export const cidrList = () =>
  z.preprocess(
    (v) => (unset(v) ? '' : v),
    z.string().transform((raw, ctx) => {
      const out: string[] = [];
      for (const item of raw.split(',')) {
        const s = item.trim();
        if (s === '') continue;
        const ok = normalizeCidr(s) !== null;
        if (!ok) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            message: `expected IP addresses or CIDR ranges separated by commas (such as 10.0.0.0/8,::1), got "${s}"`,
          });
          return z.NEVER;
        }
        out.push(s);
      }
      return out;
    }),
  );
