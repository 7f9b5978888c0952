// Compiles src/ to dist/, copies the SDL files next to the compiled schema loader, and builds the
// web client (web/) to dist/web with brotli and gzip copies of each asset for the server to send.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

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

execFileSync(
  process.execPath,
  [
    path.join(root, 'node_modules/vite/bin/vite.js'),
    'build',
    '--config',
    path.join(root, 'web/vite.config.ts'),
    '--logLevel',
    'warn',
  ],
  { stdio: 'inherit', cwd: path.join(root, 'web') },
);
const assets = path.join(root, 'dist/web/assets');
for (const file of fs.readdirSync(assets)) {
  if (!/\.(js|css|svg|json|txt)$/.test(file)) continue;
  const body = fs.readFileSync(path.join(assets, file));
  fs.writeFileSync(
    path.join(assets, `${file}.br`),
    zlib.brotliCompressSync(body, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
  );
  fs.writeFileSync(path.join(assets, `${file}.gz`), zlib.gzipSync(body, { level: 9 }));
}
