import { validation } from '../../errors.js';

// The pipeline trigger pattern: a glob, not a regular expression. `*` is any run of characters,
// `?` one character, `\` makes the next character literal; letters match without case, and the
// pattern matches anywhere in the message. Matching is the classic two-pointer glob walk with one
// backtrack point, at most (text length + 1) × (pattern length + 1) steps whatever the input, so
// no pattern can stall the process the way a backtracking regex (`(a+)+$`) can.

export const PATTERN_MAX = 200;

export interface Pattern {
  source: string;
  /** Tokens: a literal character, `*` or `?`. */
  tokens: Array<{ kind: 'char'; c: string } | { kind: 'star' } | { kind: 'one' }>;
}

/** Parses a pattern; VALIDATION naming `pattern` for an empty or too long one. */
export function compilePattern(source: unknown): Pattern {
  if (typeof source !== 'string' || source.trim() === '') {
    throw validation('pattern: give the text (with * and ?) a message must contain', {
      argument: 'pattern',
    });
  }
  if ([...source].length > PATTERN_MAX) {
    throw validation(`pattern: at most ${PATTERN_MAX} characters`, { argument: 'pattern' });
  }
  const tokens: Pattern['tokens'] = [{ kind: 'star' }];
  const chars = [...source.toLowerCase()];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\' && i + 1 < chars.length) tokens.push({ kind: 'char', c: chars[++i]! });
    else if (c === '*') {
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (c === '?') tokens.push({ kind: 'one' });
    else tokens.push({ kind: 'char', c });
  }
  if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
  return { source, tokens };
}

/**
 * Whether `text` matches; `meter.steps` counts the loop's steps (the tests check the bound).
 */
export function matchPattern(p: Pattern, text: string, meter?: { steps: number }): boolean {
  const t = [...text.toLowerCase()];
  const k = p.tokens;
  let ti = 0;
  let ki = 0;
  let starK = -1;
  let starT = 0;
  let steps = 0;
  while (ti < t.length) {
    steps++;
    const tok = k[ki];
    if (tok && (tok.kind === 'one' || (tok.kind === 'char' && tok.c === t[ti]))) {
      ti++;
      ki++;
    } else if (tok && tok.kind === 'star') {
      starK = ki++;
      starT = ti;
    } else if (starK >= 0) {
      ki = starK + 1;
      ti = ++starT;
    } else {
      if (meter) meter.steps += steps;
      return false;
    }
  }
  while (k[ki]?.kind === 'star') ki++;
  if (meter) meter.steps += steps;
  return ki === k.length;
}
