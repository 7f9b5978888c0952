// Reference for the `files` scenario: a bare Fastify route that streams a multipart file part to
// disk (a temporary file, fsynced, then renamed into place, the durability svc gives) and one that
// streams a stored file back. No authentication, no hashing, no type check: the ceiling for
// moving the same bytes to and from disk on this machine.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import multipart from '@fastify/multipart';
import Fastify from 'fastify';

const dir = fs.mkdtempSync(path.join(process.env.REFERENCE_DIR ?? os.tmpdir(), 'svc-ref-files-'));
const app = Fastify({ logger: false });
await app.register(multipart, { limits: { fileSize: 26 * 1024 * 1024, files: 1 } });

app.post('/upload', async (request) => {
  let size = 0;
  let name = '';
  for await (const part of request.parts()) {
    if (part.type !== 'file') continue;
    const tmp = path.join(dir, `${randomUUID()}.tmp`);
    const out = fs.createWriteStream(tmp);
    part.file.on('data', (c: Buffer) => (size += c.length));
    await pipeline(part.file, out);
    const fh = await fsp.open(tmp, 'r');
    await fh.sync();
    await fh.close();
    name = randomUUID();
    await fsp.rename(tmp, path.join(dir, name));
  }
  return { size_bytes: size, name };
});

app.get<{ Params: { name: string } }>('/download/:name', async (request, reply) => {
  const file = path.join(dir, path.basename(request.params.name));
  const stat = await fsp.stat(file);
  reply.header('content-type', 'application/pdf');
  reply.header('content-length', stat.size);
  return reply.send(fs.createReadStream(file));
});

app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.on('SIGTERM', () => {
  fs.rmSync(dir, { recursive: true, force: true });
  void app.close().then(() => process.exit(0));
});
