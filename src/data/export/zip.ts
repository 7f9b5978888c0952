import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import yazl from 'yazl';

/**
 * Packs the export folder `dir` into the ZIP archive `file` (what a person downloads): the
 * manifest and JSON Lines deflated, the stored files as they are (mostly compressed already),
 * under one top folder named `top`.
 */
export async function zipFolder(dir: string, file: string, top: string): Promise<number> {
  const zip = new yazl.ZipFile();
  const done = pipeline(zip.outputStream, createWriteStream(file));
  const add = async (rel: string) => {
    for (const entry of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const name = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await add(name);
      else {
        zip.addFile(path.join(dir, name), `${top}/${name}`, {
          compress: !name.startsWith('files/'),
        });
      }
    }
  };
  await add('');
  zip.end();
  await done;
  return (await fs.stat(file)).size;
}
