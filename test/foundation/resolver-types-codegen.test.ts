import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import {
  GENERATED_DIR,
  GENERATED_PATH,
  SCHEMA_DIR,
  generate,
} from '../../scripts/gen-resolver-types.js';

// The generated resolver types cannot drift from the SDL: `npm run lint` runs the generator
// with --check, which fails while the committed file differs from what the SDL gives.

const root = path.resolve(path.dirname(GENERATED_PATH), '../../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-codegen-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function check(schemaDir: string) {
  return spawnSync(
    process.execPath,
    ['--import', 'tsx', 'scripts/gen-resolver-types.ts', '--check', '--schema-dir', schemaDir],
    { cwd: root, encoding: 'utf8' },
  );
}

describe('generated resolver types', () => {
  it('the committed files are what the SDL gives, and no other', async () => {
    const files = await generate();
    expect([...files.keys()].sort()).toEqual(
      fs
        .readdirSync(GENERATED_DIR)
        .map((name) => path.join(GENERATED_DIR, name))
        .sort(),
    );
    for (const [file, text] of files) expect(text).toBe(fs.readFileSync(file, 'utf8'));
  }, 60_000);

  it('the check fails when the SDL changes without regenerating', async () => {
    const dir = path.join(tmp, 'schema');
    fs.cpSync(SCHEMA_DIR, dir, { recursive: true });
    const file = path.join(dir, 'messages.graphql');
    fs.appendFileSync(file, '\nextend type Message {\n  wordCount: Int!\n}\n');
    // The field reaches the generated types: Message's shape (and so its resolvers) types it.
    const generated = [...(await generate(dir)).values()].join('\n');
    expect(generated).toMatch(/\n {2}Message: \{[^}]*\n {4}wordCount: number;/);
    const run = check(dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /src\/graphql\/generated\/shapes-\d+\.ts differs from what the SDL gives: run `npm run codegen`/,
    );
  }, 180_000);
});
