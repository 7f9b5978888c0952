import fs from 'node:fs';
import path from 'node:path';

import yauzl from 'yauzl';

// An export as files by name: a ZIP archive (read through its central directory, one file at a
// time, so a large export is never held whole) or a folder it was unpacked into.

export interface Archive {
  /** Every file's path inside the export, with `/` between folders. */
  names: string[];
  read(name: string): Promise<string>;
  /** A file's bytes as a stream (an attachment or emoji image), never held whole. */
  open(name: string): Promise<AsyncIterable<Uint8Array>>;
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
    open: async (name) => fs.createReadStream(path.join(root, ...name.split('/'))),
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
      zip.on('end', () => {
        const open = (name: string) =>
          new Promise<NodeJS.ReadableStream>((done, fail) => {
            const entry = entries.get(name);
            if (!entry) {
              fail(new Error(`${name} is not in ${file}`));
              return;
            }
            zip.openReadStream(entry, (e, stream) => {
              if (e || !stream)
                fail(new Error(`${name} in ${file}: ${e?.message ?? 'unreadable'}`));
              else done(stream);
            });
          });
        resolve({
          names: [...entries.keys()],
          read: async (name) => {
            const stream = (await open(name)) as AsyncIterable<Buffer>;
            const chunks: Buffer[] = [];
            try {
              for await (const c of stream) chunks.push(c);
            } catch (err) {
              throw new Error(`${name} in ${file}: ${(err as Error).message}`);
            }
            return Buffer.concat(chunks).toString('utf8');
          },
          open: async (name) => (await open(name)) as AsyncIterable<Uint8Array>,
          close: async () => zip.close(),
        });
      });
      zip.readEntry();
    });
  });
}
