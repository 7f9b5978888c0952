import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { readSources, type Source } from './check-table-owners.js';
import { circles, importGraph, type Import } from './import-graph.js';

// The area-surface check: each folder of src/services is an area, and its index.ts is what
// other areas and the edges may use. An import from outside an area reaches only its index; an
// area's own files import each other directly, never their own index; an index re-exports only
// its own folder; and no areas import each other in a circle (two-way or longer, type imports
// counted): one of them calls the other through a port or a hook in wiring.ts. The command line
// (src/cli/) and a dynamic `import()` may name a file of an area: a command loads only what it
// needs, where an index would load the whole area (`svc --help` reads 30 files, not 350). Run by
// `npm run lint`; `tsx scripts/check-area-surfaces.ts` alone. Tests are not checked.

/** The area of a file under src/ (`services/<area>/...`), or null outside the areas. */
export function areaOf(file: string): string | null {
  const parts = file.split('/');
  return parts[0] === 'services' && parts.length > 2 ? parts[1]! : null;
}

const surfaceOf = (area: string) => `services/${area}/index.ts`;

const at = (i: Import) => `src/${i.from}:${i.line}`;

/** The problems of `imports` (from `importGraph`), one line each. */
export function areaSurfaceProblems(imports: readonly Import[]): string[] {
  const problems: string[] = [];
  const between = new Map<string, Import[]>();
  for (const i of imports) {
    const from = areaOf(i.from);
    const to = areaOf(i.to);
    if (to === null) continue;
    if (from === to) {
      if (i.to === surfaceOf(to) && i.from !== surfaceOf(to)) {
        problems.push(
          `${at(i)}: imports its own area's index.ts; within services/${to} import the file itself`,
        );
      }
      continue;
    }
    if (i.from === surfaceOf(from ?? '')) {
      problems.push(`${at(i)}: an area's index.ts re-exports only its own files, not src/${i.to}`);
    }
    if (i.to !== surfaceOf(to) && !i.dynamic && !i.from.startsWith('cli/')) {
      problems.push(
        `${at(i)}: imports src/${i.to}, inside the ${to} area; import src/${surfaceOf(to)} (its surface), exporting the name there if it is new`,
      );
    }
    if (from !== null) {
      const key = `${from} ${to}`;
      between.set(key, [...(between.get(key) ?? []), i]);
    }
  }
  // The areas' own graph: a circle in it, however short or long, is a problem.
  const areaImports: Import[] = [...between.keys()].map((key) => {
    const [from, to] = key.split(' ') as [string, string];
    return { from, to, line: 0, typeOnly: false };
  });
  for (const circle of circles(areaImports)) {
    const inside = [...between.entries()]
      .filter(([key]) => key.split(' ').every((a) => circle.includes(a)))
      .map(([key, list]) => `${key.replace(' ', ' -> ')} (${at(list[0]!)})`);
    problems.push(
      `areas ${circle.join(', ')} import each other in a circle: ${inside.join('; ')}. ` +
        'Let one call the other through a port it declares or a hook registered in src/wiring.ts',
    );
  }
  return problems;
}

/** The check over `sources` (readSources of src/). */
export function checkAreaSurfaces(sources: readonly Source[]): string[] {
  return areaSurfaceProblems(importGraph(sources));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');
  const problems = checkAreaSurfaces(readSources(src));
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(
      `area-surface check: ${problems.length} problem(s) (docs/architecture.md, "Area surfaces")`,
    );
    process.exitCode = 1;
  }
}
