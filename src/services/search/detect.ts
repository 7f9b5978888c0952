import {
  LANGUAGE_CODES,
  languageOf,
  languagesOfScript,
  type LanguageCode,
  type Script,
} from './languages.js';
import { ngramDetector, type NgramDetector, type NgramResult } from './ngram-scores.js';

// Which language a message is in, for its stems (docs/search.md, "Languages"). ELD (Efficient
// Language Detector, n-gram based) guesses among the languages search stems; a guess it does
// not call reliable (a short text, a text of mixed languages) gives way to the fallback: the
// author's language if they chose one, else the workspace's. The script narrows the choice
// first: Cyrillic is Russian or Ukrainian, Arabic script Arabic, whatever the detector says.
// ELD's scores are computed by ngram-scores.ts, which gives its answers at a fraction of its cost.

// Built at the first detection (about 170 ms of reading ELD's file), not when the module loads:
// a CLI command that never detects a language does not pay for it.
let eld: NgramDetector | null = null;

// A send asks twice about the same text (whether to read the fallback, then the language):
// the last answer is kept.
let last: { text: string; result: NgramResult } | null = null;
function detect(text: string) {
  if (last?.text !== text)
    last = { text, result: (eld ??= ngramDetector(LANGUAGE_CODES)).detect(text) };
  return last.result;
}

/** The script most of a text's letters are in, or null when it has none search stems. */
export function dominantScript(text: string): Script | null {
  let latin = 0;
  let cyrillic = 0;
  let arabic = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) latin += 1;
    } else if (c >= 0x0400 && c <= 0x052f) cyrillic += 1;
    else if (c >= 0x0600 && c <= 0x06ff) arabic += 1;
    else if (c >= 0xc0 && c <= 0x24f) latin += 1;
  }
  const most = Math.max(latin, cyrillic, arabic);
  if (most === 0) return null;
  return most === latin ? 'latin' : most === cyrillic ? 'cyrillic' : 'arabic';
}

/**
 * The language to stem `text` in: the detector's reliable guess, else `fallback` when it is
 * written in the text's script, else the detector's best guess in that script (its first
 * language when it has none). Null for a text without letters of a stemmed script.
 */
export function detectLanguage(text: string, fallback?: string | null): LanguageCode | null {
  const script = dominantScript(text);
  if (script === null) return null;
  const candidates = languagesOfScript(script);
  if (candidates.length === 1) return candidates[0]!.code;
  const result = detect(text);
  const guess = languageOf(result.language);
  const inScript = guess && guess.script === script ? guess.code : null;
  if (inScript && result.isReliable()) return inScript;
  const fallen = languageOf(fallback);
  if (fallen && fallen.script === script) return fallen.code;
  if (inScript) return inScript;
  const scores = result.getScores();
  const best = candidates
    .map((l) => ({ code: l.code, score: scores[l.code] ?? 0 }))
    .sort((a, b) => b.score - a.score)[0]!;
  return best.code;
}

/** Whether `text` is one the detector cannot tell (a fallback language would decide). */
export function needsFallback(text: string): boolean {
  const script = dominantScript(text);
  if (script === null || languagesOfScript(script).length === 1) return false;
  const result = detect(text);
  const guess = languageOf(result.language);
  return !(guess && guess.script === script && result.isReliable());
}
