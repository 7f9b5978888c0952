// Reference: a bare Fastify route doing the same insert as the insert loop, per request.
import Fastify from 'fastify';

import { openStore } from './message-store.js';

const store = await openStore();
const app = Fastify({ logger: false });
app.post('/send', async (request) => {
  const body = request.body as { conversationId: string; text: string };
  await store.insert(body.conversationId, body.text);
  return { ok: true };
});
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => store.close())
      .then(() => process.exit(0)),
);
