import type { Place, Problem } from './model.js';

// Slack's files are JSON arrays, one object per element. They are read element by element, so
// a broken element is reported with its line and skipped while the rest of the file is read.

export interface JsonItem {
  value: unknown;
  place: Place;
}

/**
 * The elements of the JSON array in `text`, each with the line it starts on. An element that is
 * not valid JSON becomes a problem; a file that is not an array at all is one problem.
 */
export function arrayItems(text: string, file: string): { items: JsonItem[]; problems: Problem[] } {
  const items: JsonItem[] = [];
  const problems: Problem[] = [];
  let line = 1;
  let i = 0;
  const skipSpace = () => {
    while (i < text.length) {
      const ch = text[i]!;
      if (ch === '\n') line++;
      else if (ch !== ' ' && ch !== '\t' && ch !== '\r' && ch !== '\uFEFF') break;
      i++;
    }
  };
  skipSpace();
  if (text[i] !== '[') {
    problems.push({ file, line, message: 'expected a JSON array' });
    return { items, problems };
  }
  i++;
  for (;;) {
    skipSpace();
    if (i >= text.length) {
      problems.push({ file, line, message: 'the array is not closed (is the file cut short?)' });
      break;
    }
    if (text[i] === ']') break;
    const startLine = line;
    const start = i;
    // Scan to the end of this element: the next comma or `]` at depth 0 outside a string.
    let depth = 0;
    let inString = false;
    for (; i < text.length; i++) {
      const ch = text[i]!;
      if (ch === '\n') line++;
      if (inString) {
        if (ch === '\\') i++;
        else if (ch === '"') inString = false;
        continue;
      }
      if (ch === '"') inString = true;
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        if (depth === 0) break;
        depth--;
      } else if (ch === ',' && depth === 0) break;
    }
    const raw = text.slice(start, i);
    try {
      items.push({ value: JSON.parse(raw), place: { file, line: startLine } });
    } catch (err) {
      problems.push({ file, line: startLine, message: `not valid JSON: ${(err as Error).message}` });
    }
    if (text[i] === ',') i++;
  }
  return { items, problems };
}

/** A whole JSON file, or a problem naming where it breaks. */
export function parseJsonFile(text: string, file: string): { value: unknown } | Problem {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    const message = (err as Error).message;
    const at = /position (\d+)/.exec(message);
    const line = at ? text.slice(0, Number(at[1])).split('\n').length : 1;
    return { file, line, message: `not valid JSON: ${message}` };
  }
}
