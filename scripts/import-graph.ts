import path from 'node:path';

import type { Source } from './check-table-owners.js';

// The relative imports of src/, read from the text: enough for the area-surface check and for
// counting import circles. `import type` and `export type` are erased by the compiler (the
// project compiles with verbatimModuleSyntax), so they are marked apart from the value imports.

export interface Import {
  /** The importing file, under src/. */
  from: string;
  /** The imported file, under src/ (`.js` read as `.ts`). */
  to: string;
  line: number;
  /** Erased at compile time: `import type`, `export type`. */
  typeOnly: boolean;
  /** `import('...')`, loaded when the code runs. */
  dynamic?: boolean;
}

const STATIC =
  /^\s*(import|export)\s+(type\s+)?(?:[\w*{}\s,$]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** The relative imports of one file (`file` under src/, forward slashes). */
export function importsOf(file: string, text: string): Import[] {
  const out: Import[] = [];
  const resolve = (spec: string) =>
    path.posix.join(path.posix.dirname(file), spec).replace(/\.js$/, '.ts');
  const lineOf = (index: number) => text.slice(0, index).split('\n').length;
  for (const m of text.matchAll(STATIC)) {
    const at = m.index + m[0].indexOf(m[1]!);
    out.push({ from: file, to: resolve(m[3]!), line: lineOf(at), typeOnly: Boolean(m[2]) });
  }
  for (const m of text.matchAll(DYNAMIC)) {
    out.push({
      from: file,
      to: resolve(m[1]!),
      line: lineOf(m.index),
      typeOnly: false,
      dynamic: true,
    });
  }
  return out;
}

/** Every relative import of `sources` (tests left out). */
export function importGraph(sources: readonly Source[]): Import[] {
  return sources
    .filter((s) => !s.path.endsWith('.test.ts'))
    .flatMap((s) => importsOf(s.path, s.text));
}

/**
 * The strongly connected parts of more than one file: each an import circle. `valueOnly` leaves
 * out the erased imports, which cannot fail at load time.
 */
export function circles(imports: readonly Import[], valueOnly = false): string[][] {
  const next = new Map<string, string[]>();
  for (const i of imports) {
    if (valueOnly && i.typeOnly) continue;
    next.set(i.from, [...(next.get(i.from) ?? []), i.to]);
  }
  // Tarjan, iterative enough for a few thousand files.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1) found.push(part.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}
