import fs from 'node:fs';
import path from 'node:path';

import yauzl from 'yauzl';

// An export as files by name: a ZIP archive (read through its central directory, one file at a
// time, so a large export is never held whole) or a folder it was unpacked into.

export interface Archive {
  /** Every file's path inside the export, with `/` between folders. */
  names: string[];
  read(name: string): Promise<string>;
  close(): Promise<void>;
}

export async function openArchive(file: string): Promise<Archive> {
  const stat = await fs.promises.stat(file);
  if (stat.isDirectory()) return openFolder(file);
  return openZip(file);
}

async function openFolder(root: string): Promise<Archive> {
  const names: string[] = [];
  const walk = async (dir: string) => {
    for (const entry of await fs.promises.readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else names.push(path.relative(root, full).split(path.sep).join('/'));
    }
  };
  await walk(root);
  return {
    names,
    read: (name) => fs.promises.readFile(path.join(root, ...name.split('/')), 'utf8'),
    close: async () => {},
  };
}

function openZip(file: string): Promise<Archive> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: false }, (err, zip) => {
      if (err || !zip) {
        reject(new Error(`${file} is not a ZIP archive (${err?.message ?? 'unreadable'})`));
        return;
      }
      const entries = new Map<string, yauzl.Entry>();
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('/')) entries.set(entry.fileName, entry);
        zip.readEntry();
      });
      zip.on('error', reject);
      zip.on('end', () =>
        resolve({
          names: [...entries.keys()],
          read: (name) =>
            new Promise<string>((done, fail) => {
              const entry = entries.get(name);
              if (!entry) {
                fail(new Error(`${name} is not in ${file}`));
                return;
              }
              zip.openReadStream(entry, (e, stream) => {
                if (e || !stream) {
                  fail(new Error(`${name} in ${file}: ${e?.message ?? 'unreadable'}`));
                  return;
                }
                const chunks: Buffer[] = [];
                stream.on('data', (c: Buffer) => chunks.push(c));
                stream.on('error', (se) => fail(new Error(`${name} in ${file}: ${se.message}`)));
                stream.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
              });
            }),
          close: async () => zip.close(),
        }),
      );
      zip.readEntry();
    });
  });
}
