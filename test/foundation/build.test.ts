import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { buildIfChanged, currentStamp, fingerprint } from '../../scripts/build-lib.mjs';
import { BUILD_INPUTS } from '../../scripts/build.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// `npm start` builds before serving. A build that finds nothing changed does nothing, and a
// rebuild swaps dist/ in one rename, so a concurrent `npx svc ...` never finds it missing. The
// build step here is a tiny fake that writes dist/cli/index.js from the sources.
describe('building dist/ only when needed, swapping it atomically', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
  });

  function project() {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-build-'));
    roots.push(root);
    fs.mkdirSync(path.join(root, 'src'));
    fs.writeFileSync(path.join(root, 'src/main.ts'), 'v1');
    fs.writeFileSync(path.join(root, 'package-lock.json'), '{}');
    let builds = 0;
    const build = (out: string) => {
      builds++;
      fs.mkdirSync(path.join(out, 'cli'), { recursive: true });
      const source = fs.readFileSync(path.join(root, 'src/main.ts'), 'utf8');
      fs.writeFileSync(path.join(out, 'cli/index.js'), `// built from ${source}\n`);
    };
    const run = (extra: Partial<Parameters<typeof buildIfChanged>[0]> = {}) =>
      buildIfChanged({ root, inputs: ['src', 'package-lock.json'], build, ...extra });
    const entry = () => fs.readFileSync(path.join(root, 'dist/cli/index.js'), 'utf8');
    return { root, run, entry, builds: () => builds };
  }

  it('builds once, then does nothing until an input changes', async () => {
    const p = project();
    expect((await p.run()).built).toBe(true);
    expect(p.entry()).toBe('// built from v1\n');
    expect(fs.lstatSync(path.join(p.root, 'dist')).isSymbolicLink()).toBe(true);

    expect(await p.run()).toMatchObject({ built: false });
    expect(await p.run()).toMatchObject({ built: false });
    expect(p.builds()).toBe(1);

    fs.writeFileSync(path.join(p.root, 'src/main.ts'), 'v2');
    expect((await p.run()).built).toBe(true);
    expect(p.entry()).toBe('// built from v2\n');
    fs.writeFileSync(path.join(p.root, 'package-lock.json'), '{"lockfileVersion":3}');
    expect((await p.run()).built).toBe(true);
    fs.mkdirSync(path.join(p.root, 'src/more'));
    fs.writeFileSync(path.join(p.root, 'src/more/new.ts'), '');
    expect((await p.run()).built).toBe(true);
    expect(p.builds()).toBe(4);
    expect((await p.run({ force: true })).built).toBe(true);
    expect(p.builds()).toBe(5);
  });

  it('keeps the old dist/cli/index.js readable while a rebuild runs, and after a failed one', async () => {
    const p = project();
    await p.run();
    fs.writeFileSync(path.join(p.root, 'src/main.ts'), 'v2');
    let during: string | null = null;
    await buildIfChanged({
      root: p.root,
      inputs: ['src', 'package-lock.json'],
      build: async (out) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        during = p.entry();
        fs.mkdirSync(path.join(out, 'cli'));
        fs.writeFileSync(path.join(out, 'cli/index.js'), 'new');
      },
    });
    expect(during).toBe('// built from v1\n');
    expect(p.entry()).toBe('new');

    await expect(
      buildIfChanged({
        root: p.root,
        inputs: ['src'],
        force: true,
        build: () => {
          throw new Error('tsc failed');
        },
      }),
    ).rejects.toThrow('tsc failed');
    expect(p.entry()).toBe('new');
    expect(fs.readdirSync(p.root).filter((n) => n.startsWith('dist.tmp-'))).toEqual([]);
  });

  it('never lets a concurrent reader in another process miss dist/cli/index.js', async () => {
    const p = project();
    await p.run();
    // A reader that opens dist/cli/index.js in a loop until its stdin closes.
    const reader = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); let reads = 0, misses = 0, done = false;
         process.stdin.on('end', () => { done = true; }); process.stdin.resume();
         (function loop() {
           for (let i = 0; i < 200; i++) {
             try { fs.readFileSync(${JSON.stringify(path.join(p.root, 'dist/cli/index.js'))}); reads++; }
             catch { misses++; }
           }
           if (done) { process.stdout.write(JSON.stringify({ reads, misses })); return; }
           setImmediate(loop);
         })();`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let output = '';
    reader.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => reader.on('exit', resolve));
    for (let i = 0; i < 30; i++) {
      fs.writeFileSync(path.join(p.root, 'src/main.ts'), `v${i + 2}`);
      expect((await p.run({ keepRecentMs: 0 })).built).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    reader.stdin.end();
    await exited;
    const { reads, misses } = JSON.parse(output) as { reads: number; misses: number };
    expect(reads).toBeGreaterThan(0);
    expect(misses).toBe(0);
    // Old builds are removed; the current and the previous one stay.
    const builds = fs.readdirSync(p.root).filter((n) => n.startsWith('dist.'));
    expect(builds).toHaveLength(2);
  });

  it('replaces a plain dist/ folder left by an older build script', async () => {
    const p = project();
    fs.mkdirSync(path.join(p.root, 'dist/cli'), { recursive: true });
    fs.writeFileSync(path.join(p.root, 'dist/cli/index.js'), 'old');
    expect((await p.run()).built).toBe(true);
    expect(fs.lstatSync(path.join(p.root, 'dist')).isSymbolicLink()).toBe(true);
    expect(p.entry()).toBe('// built from v1\n');
    expect(await p.run()).toMatchObject({ built: false });
  });

  // CI builds before the tests (.ci/run), so the real script finds nothing to do and must not
  // rebuild; skipped when dist/ is missing or stale here, where running it would take minutes.
  it.runIf(currentStamp(repo) === fingerprint(repo, BUILD_INPUTS))(
    'the real build script does nothing when dist/ is current',
    async () => {
      const target = fs.readlinkSync(path.join(repo, 'dist'));
      const child = spawn(process.execPath, [path.join(repo, 'scripts/build.mjs')], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise((resolve) => child.on('exit', resolve));
      expect(code).toBe(0);
      expect(stderr).toBe('build: dist is up to date\n');
      expect(fs.readlinkSync(path.join(repo, 'dist'))).toBe(target);
    },
  );
});
