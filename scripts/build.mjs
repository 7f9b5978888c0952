// Compiles src/ to dist/ and copies the SDL files next to the compiled schema loader.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true });
execFileSync(
  process.execPath,
  [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.json')],
  {
    stdio: 'inherit',
  },
);
const from = path.join(root, 'src/graphql/schema');
const to = path.join(root, 'dist/graphql/schema');
fs.mkdirSync(to, { recursive: true });
for (const file of fs.readdirSync(from)) {
  if (file.endsWith('.graphql')) fs.copyFileSync(path.join(from, file), path.join(to, file));
}
