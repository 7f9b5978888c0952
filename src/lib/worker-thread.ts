import { Worker } from 'node:worker_threads';

/**
 * A worker thread running the module `entry` (a file URL): a built `.js` as it is; a TypeScript
 * source (the tests, `tsx`) through tsx's loader, which the worker registers first, since
 * loader flags do not reach a worker's entry on Node 20.
 */
export function startWorker(entry: URL): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry);
  return new Worker(
    `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(entry.href)}); });`,
    { eval: true },
  );
}

/** The file beside the module at `base` (its `import.meta.url`) named `name`, as that one is. */
export function besideModule(base: string, name: string): URL {
  return new URL(`./${name}.${base.endsWith('.ts') ? 'ts' : 'js'}`, base);
}
