import { describe, expect, it } from 'vitest';

import { CLI_ACTOR } from '../../src/auth/actor.js';
import { runCli } from '../../src/cli/run.js';
import { RawClient, startRealtime, type RealtimeTestServer } from '../realtime/_helpers.js';

const BLOCK = `mutation($p: String!) { instanceBlockPrincipal(principalId: $p) { sessionsEnded } }`;

async function connected(t: RealtimeTestServer, agent: Parameters<typeof RawClient.open>[2]) {
  const raw = await RawClient.open(t.wsUrl, 'graphql-ws', agent);
  raw.send({ type: 'connection_init' });
  await raw.next((m) => m.type === 'connection_ack');
  return raw;
}

// Contract: blocking a principal ends its sessions; open sockets close with 4401 at once on
// the process that made the change, within SVC_WS_SESSION_RECHECK_SECS elsewhere.
describe('blocking a principal closes its WebSocket connections', () => {
  it('at once on the process that made the block', async () => {
    // The recheck is off: only the block's own `ended` announcement can close the socket.
    const t = await startRealtime({ env: { SVC_WS_SESSION_RECHECK_SECS: '0' } });
    try {
      const op = await t.signUp();
      await t.server.ctx.services.accounts.setOperatorByUsername(CLI_ACTOR, op.username, true);
      const victim = await t.signUp();
      const raw = await connected(t, victim);
      const res = await t.gql(BLOCK, { p: `user:${victim.id}` }, op);
      expect(res.data?.instanceBlockPrincipal.sessionsEnded).toBe(1);
      expect(await raw.waitClosed(2000)).toEqual({ code: 4401, reason: 'session ended' });
    } finally {
      await t.stop();
    }
  });

  it('within the recheck interval when the command line blocks it', async () => {
    const t = await startRealtime({ env: { SVC_WS_SESSION_RECHECK_SECS: '1' } });
    try {
      const victim = await t.signUp();
      const raw = await connected(t, victim);
      let err = '';
      const code = await runCli(['principal', 'block', `user:${victim.id}`], {
        out: () => {},
        err: (s) => (err += s),
        readStdin: async () => '',
        env: { ...t.server.database.env, SVC_LOG_LEVEL: 'warn' },
      });
      expect([code, err.includes('"action":"principal.block"')]).toEqual([0, true]);
      expect(await raw.waitClosed(5000)).toEqual({ code: 4401, reason: 'session ended' });
    } finally {
      await t.stop();
    }
  });
});
