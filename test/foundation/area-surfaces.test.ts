import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { checkAreaSurfaces } from '../../scripts/check-area-surfaces.js';
import { readSources } from '../../scripts/check-table-owners.js';
import { circles, importsOf } from '../../scripts/import-graph.js';

const src = (files: Record<string, string>) =>
  Object.entries(files).map(([p, text]) => ({ path: p, text }));

/** A small tree of three areas that keeps the rules. */
const tree = {
  'services/a/index.ts': "export { f } from './f.js';\nexport type { T } from './t.js';\n",
  'services/a/f.ts': "import type { T } from './t.js';\nexport const f = (t: T) => t;\n",
  'services/a/t.ts': 'export interface T { id: string }\n',
  'services/b/index.ts': "export { g } from './g.js';\n",
  'services/b/g.ts':
    "import { f, type T } from '../a/index.js';\nexport const g = (t: T) => f(t);\n",
  'services/c/index.ts': "export { h } from './h.js';\n",
  'services/c/h.ts': "import { g } from '../b/index.js';\nexport const h = g;\n",
  'graphql/resolver.ts': "import { h } from '../services/c/index.js';\nexport const r = h;\n",
  'build-services.ts': "import type { T } from './services/a/index.js';\nexport type U = T;\n",
};

describe('the area-surface check', () => {
  it('passes a tree that imports areas through their index', () => {
    expect(checkAreaSurfaces(src(tree))).toEqual([]);
  });

  it.each([
    [
      'an area',
      'services/c/h.ts',
      "import { f } from '../a/f.js';\n",
      /services\/a\/f\.ts, inside the a area/,
    ],
    [
      'an edge',
      'graphql/resolver.ts',
      "import { g } from '../services/b/g.js';\n",
      /services\/b\/g\.ts, inside the b area/,
    ],
    ['a type', 'services/c/h.ts', "import type { T } from '../a/t.js';\n", /services\/a\/t\.ts/],
    ['a re-export', 'services/c/h.ts', "export { f } from '../a/f.js';\n", /services\/a\/f\.ts/],
  ])('refuses a deep import from %s', (_what, file, line, message) => {
    const planted = src({ ...tree, [file]: line + ((tree as Record<string, string>)[file] ?? '') });
    const problems = checkAreaSurfaces(planted);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
    expect(problems[0]).toContain(`src/${file}:1:`);
  });

  it("refuses an area's file importing its own index", () => {
    const planted = src({ ...tree, 'services/a/f.ts': "import type { T } from './index.js';\n" });
    expect(checkAreaSurfaces(planted)).toEqual([
      "src/services/a/f.ts:1: imports its own area's index.ts; within services/a import the file itself",
    ]);
  });

  it('refuses an index that re-exports another area', () => {
    const planted = src({ ...tree, 'services/c/index.ts': "export { g } from '../b/index.js';\n" });
    expect(checkAreaSurfaces(planted)[0]).toMatch(/index\.ts re-exports only its own files/);
  });

  it('refuses two areas that import each other, even by a type', () => {
    const planted = src({
      ...tree,
      'services/a/t.ts': "import type { g } from '../b/index.js';\nexport type T = typeof g;\n",
    });
    const problems = checkAreaSurfaces(planted);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^areas a, b import each other in a circle: /);
    expect(problems[0]).toContain('a -> b (src/services/a/t.ts:1)');
    expect(problems[0]).toContain('b -> a (src/services/b/g.ts:1)');
  });

  it('refuses a longer circle of areas', () => {
    const planted = src({
      ...tree,
      'services/a/t.ts': "import { h } from '../c/index.js';\nexport type T = typeof h;\n",
    });
    expect(checkAreaSurfaces(planted)).toEqual([
      expect.stringMatching(/^areas a, b, c import each other in a circle/),
    ]);
  });

  it('lets a dynamic import load one file of an area (a command loads only what it needs)', () => {
    const planted = src({
      ...tree,
      'cli/cmd.ts': "const m = await import('../services/a/f.js');\n",
    });
    expect(checkAreaSurfaces(planted)).toEqual([]);
  });

  it('lets the command line import one file of an area statically', () => {
    const planted = src({ ...tree, 'cli/cmd.ts': "import { f } from '../services/a/f.js';\n" });
    expect(checkAreaSurfaces(planted)).toEqual([]);
  });

  it('counts a dynamic import in a circle of areas', () => {
    const planted = src({
      ...tree,
      'services/a/t.ts': "export const t = () => import('../c/h.js');\n",
    });
    expect(checkAreaSurfaces(planted)).toEqual([
      expect.stringMatching(/^areas a, b, c import each other in a circle/),
    ]);
  });

  it('leaves tests alone', () => {
    const planted = src({ ...tree, 'services/c/h.test.ts': "import { f } from '../a/f.js';\n" });
    expect(checkAreaSurfaces(planted)).toEqual([]);
  });

  it('finds a deep import planted in the real tree', () => {
    const sources = readSources(path.resolve(import.meta.dirname, '../../src'));
    expect(checkAreaSurfaces(sources)).toEqual([]);
    const planted = sources.map((s) =>
      s.path === 'services/messages/sending.ts'
        ? { ...s, text: `import { toAccountView } from '../accounts/account-view.js';\n${s.text}` }
        : s,
    );
    expect(checkAreaSurfaces(planted)).toEqual([
      expect.stringContaining(
        'src/services/messages/sending.ts:1: imports src/services/accounts/account-view.ts',
      ),
    ]);
  });
});

describe('the import graph', () => {
  it('reads value, type, re-export and dynamic imports', () => {
    const text = [
      "import { a, type B } from './a.js';",
      "import type { C } from '../c/c.js';",
      "export { d } from './d.js';",
      "export type { E } from './e.js';",
      "export * from './f.js';",
      "import './g.js';",
      "const h = await import('./h.js');",
      "import x from 'node:fs';",
    ].join('\n');
    expect(importsOf('services/z/z.ts', text).map((i) => [i.to, i.line, i.typeOnly])).toEqual([
      ['services/z/a.ts', 1, false],
      ['services/c/c.ts', 2, true],
      ['services/z/d.ts', 3, false],
      ['services/z/e.ts', 4, true],
      ['services/z/f.ts', 5, false],
      ['services/z/g.ts', 6, false],
      ['services/z/h.ts', 7, false],
    ]);
  });

  it('finds circles, and the value-only ones apart', () => {
    const imports = [
      { from: 'a', to: 'b', line: 1, typeOnly: false },
      { from: 'b', to: 'a', line: 1, typeOnly: true },
      { from: 'c', to: 'd', line: 1, typeOnly: false },
    ];
    expect(circles(imports)).toEqual([['a', 'b']]);
    expect(circles(imports, true)).toEqual([]);
  });
});
