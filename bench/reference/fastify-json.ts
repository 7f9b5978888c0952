// Reference: a bare Fastify JSON route, the ceiling for a GraphQL-over-HTTP request on this
// machine. POST /api parses the JSON body and answers a fixed document shaped like serverInfo.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const answer = {
  data: {
    serverInfo: { version: '0.0.0', apiVersion: 1, signupRequiresKeys: true, features: [] },
  },
};
app.post('/api', async (request) => {
  void request.body;
  return answer;
});
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
