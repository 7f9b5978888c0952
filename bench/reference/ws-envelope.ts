// Reference: a bare `ws` server that speaks just enough graphql-transport-ws to subscribe, and
// on POST /publish sends one `next` envelope per subscriber of a channel. It is the floor a
// subscription server can reach on this machine: one serialization per event, one write per
// socket, no GraphQL, no authorization, no database.
import http from 'node:http';

import { WebSocketServer, type WebSocket } from 'ws';

const port = Number(process.env.PORT ?? 0);
const channels = new Map<string, Map<WebSocket, string>>();

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') {
    res.writeHead(200).end('{"status":"ok"}');
    return;
  }
  if (req.method === 'POST' && req.url === '/publish') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { channel, data } = JSON.parse(body) as { channel: string; data: unknown };
      const subs = channels.get(channel);
      const payload = JSON.stringify({ data });
      let n = 0;
      if (subs) {
        for (const [ws, id] of subs) {
          ws.send(`{"id":${JSON.stringify(id)},"type":"next","payload":${payload}}`);
          n++;
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"delivered":${n}}`);
    });
    return;
  }
  res.writeHead(404).end();
});

const wss = new WebSocketServer({
  server,
  path: '/api/ws',
  handleProtocols: () => 'graphql-transport-ws',
});
wss.on('connection', (ws) => {
  ws.on('message', (raw) => {
    const msg = JSON.parse(String(raw)) as {
      type: string;
      id?: string;
      payload?: { variables?: { serverId?: string } };
    };
    if (msg.type === 'connection_init') ws.send('{"type":"connection_ack"}');
    else if (msg.type === 'ping') ws.send('{"type":"pong"}');
    else if (msg.type === 'subscribe' && msg.id) {
      const channel = msg.payload?.variables?.serverId ?? 'default';
      let subs = channels.get(channel);
      if (!subs) channels.set(channel, (subs = new Map()));
      subs.set(ws, msg.id);
    }
  });
  ws.on('close', () => {
    for (const subs of channels.values()) subs.delete(ws);
  });
});

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => {
  wss.close();
  server.close(() => process.exit(0));
});
