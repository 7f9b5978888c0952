import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { findPresenceAudience } from '../../src/services/presence/queries.js';
import type { Agent } from '../_util/app.js';
import { recordQueries } from '../conversations/_helpers.js';

import {
  createWorkspace,
  joinWorkspace,
  startRealtime,
  type RealtimeTestServer,
} from './_helpers.js';

// Who hears of a person's presence: the members of their workspaces (one event per workspace)
// and the people they share a direct conversation with (on their own topics). Read at every
// connect and disconnect, so in one statement.
describe('presence audience', () => {
  let t: RealtimeTestServer;
  let alice: Agent;
  let bob: Agent;
  let carol: Agent;
  let team: string;

  beforeAll(async () => {
    t = await startRealtime();
    [alice, bob, carol] = [await t.signUp(), await t.signUp(), await t.signUp()];
    team = (await createWorkspace(t, alice)).id;
    await joinWorkspace(t, alice, bob, team);
    const dm = await t.gql(
      'mutation($m: [ID!]!) { createConversation(input: { memberIds: $m }) { conversation { id } } }',
      { m: [bob.id] },
      alice,
    );
    expect(dm.errors).toBeUndefined();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('names the workspaces and the direct partners, in one statement', async () => {
    let audience: { workspaceIds: string[]; partners: string[] } | undefined;
    const statements = await recordQueries(async () => {
      audience = await findPresenceAudience(t.server.ctx.db.kysely, alice.id);
    });
    expect(statements).toHaveLength(1);
    expect(audience).toEqual({ workspaceIds: [team], partners: [bob.id] });
    // Nobody shared with carol: no workspace (the direct space is not one), no partner.
    expect(await findPresenceAudience(t.server.ctx.db.kysely, carol.id)).toEqual({
      workspaceIds: [],
      partners: [],
    });
  });
});
