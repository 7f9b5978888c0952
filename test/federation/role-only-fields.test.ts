import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Agent } from '../_util/app.js';
import {
  Collected,
  modernClient,
  startRealtime,
  until,
  type RealtimeTestServer,
} from '../realtime/_helpers.js';

// Role-only fields (contract, Errors: "a relay-only field on a non-relay answers FORBIDDEN";
// docs/federation.md, "Role-only fields"): `RelayEvent.hostServerId` is relay-only, checked at
// subscribe, and `myRemoteHosts` is relay-only; `applyRemoteRevocation` is host-only, refused before its statement is read. With
// SVC_ROLE=both every field works.

const WITH_HOST = 'subscription { relayStream { type hostServerId } }';
const WITHOUT_HOST = 'subscription { relayStream { type } }';
const REVOKE = `mutation { applyRemoteRevocation(statement: "not-a-statement", signature: "x") {
  revokedDevices } }`;

describe.each(['relay', 'host', 'both'] as const)('SVC_ROLE=%s', (role) => {
  let t: RealtimeTestServer;
  let ann: Agent;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startRealtime({ env: { SVC_ROLE: role } });
    ann = await t.signUp();
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await t?.stop();
  });

  const relays = role !== 'host';
  const hosts = role !== 'relay';

  it(`${relays ? 'gives' : 'refuses'} RelayEvent.hostServerId`, async () => {
    const client = modernClient(t.wsUrl, ann);
    clients.push(client);
    const asked = new Collected(client, WITH_HOST);
    const plain = new Collected(client, WITHOUT_HOST);
    if (relays) {
      await until(async () => (await t.subscriptions()) === 2, 'both subscriptions');
      expect(asked.error).toBeNull();
    } else {
      await asked.waitDone();
      // Refused at subscribe: one result with the error, then the end.
      const [refusal] = asked.results;
      expect(refusal?.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(refusal?.errors?.[0]?.message).toContain('SVC_ROLE=host');
      // The stream itself works on every server: only the relay-only field is refused.
      await until(async () => (await t.subscriptions()) === 1, 'the plain subscription');
    }
    expect(plain.error).toBeNull();
    asked.unsubscribe();
    plain.unsubscribe();
  });

  it(`${relays ? 'answers' : 'refuses'} myRemoteHosts`, async () => {
    const res = await t.gql('{ myRemoteHosts }', {}, ann);
    if (relays) {
      expect(res.errors).toBeUndefined();
      expect(res.data?.myRemoteHosts).toEqual([]);
    } else {
      expect(res.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(res.errors?.[0]?.message).toContain('SVC_ROLE=host');
    }
  });

  it(`${hosts ? 'reads' : 'refuses'} applyRemoteRevocation`, async () => {
    const res = await t.gql(REVOKE);
    const code = res.errors?.[0]?.extensions?.code;
    // A host reads the statement (this one is no statement); a relay-only server does not.
    expect(code).toBe(hosts ? 'UNAUTHENTICATED' : 'FORBIDDEN');
    if (!hosts) expect(res.errors?.[0]?.message).toContain('SVC_ROLE=relay');
  });
});
