import fs from 'node:fs';
import path from 'node:path';

// The example bundle of docs/plugins.md, read from the page itself so the example cannot rot,
// and builders of other bundles from it.

const DOC = path.join(import.meta.dirname, '../../docs/plugins.md');

/** The text of the example bundle exactly as docs/plugins.md shows it. */
export function exampleBundleText(): string {
  const doc = fs.readFileSync(DOC, 'utf8');
  const m = /<!-- example-bundle -->\s*```json\n([\s\S]*?)\n```/.exec(doc);
  if (!m) throw new Error('docs/plugins.md has no example bundle');
  return m[1]!;
}

/** A fresh copy of the example, parsed. */
export function exampleBundle(): any {
  return JSON.parse(exampleBundleText());
}

/** The example with changes applied, as bytes. */
export function bundleBytes(change: (b: any) => void = () => undefined): Buffer {
  const b = exampleBundle();
  change(b);
  return Buffer.from(JSON.stringify(b));
}

/** Another version of the example plugin (a different blob, the same plugin id). */
export function exampleVersion(version: string, change: (b: any) => void = () => undefined) {
  return bundleBytes((b) => {
    b.version = version;
    change(b);
  });
}
