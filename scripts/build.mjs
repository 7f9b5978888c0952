// `npm run build` (and `npm start` before serving): compiles src/ to dist/, copies the SDL files
// next to the compiled schema loader, and builds the web client (web/) to dist/web with brotli
// and gzip copies of each asset for the server to send. Does nothing when the inputs are
// unchanged since the build in place; otherwise builds into a fresh folder and swaps dist/ to it
// atomically (./build-lib.mjs), so a concurrent `npx svc ...` never finds dist/ missing.
// `--force` rebuilds anyway.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

import { buildIfChanged } from './build-lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What the build reads: a change to any of these rebuilds. */
export const BUILD_INPUTS = ['src', 'web', 'scripts', 'package-lock.json', 'tsconfig.json'];

function build(out) {
  execFileSync(
    process.execPath,
    [
      path.join(root, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(root, 'tsconfig.json'),
      '--outDir',
      out,
    ],
    { stdio: 'inherit' },
  );
  const from = path.join(root, 'src/graphql/schema');
  const to = path.join(out, 'graphql/schema');
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
      '--outDir',
      path.join(out, 'web'),
      '--logLevel',
      'warn',
    ],
    { stdio: 'inherit', cwd: path.join(root, 'web') },
  );
  const assets = path.join(out, 'web/assets');
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
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await buildIfChanged({
    root,
    inputs: BUILD_INPUTS,
    build,
    force: process.argv.includes('--force'),
  });
  process.stderr.write(
    result.built ? `build: dist -> ${result.dir}\n` : 'build: dist is up to date\n',
  );
}
