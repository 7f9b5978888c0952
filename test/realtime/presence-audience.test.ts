import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { findPresenceArrival, findPresenceAudience } from '../../src/services/presence/queries.js';
import type { Agent } from '../_util/app.js';
import { recordQueries } from '../conversations/_helpers.js';

import {
  createWorkspace,
  joinWorkspace,
  startRealtime,
  until,
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

  it('reads a first connection’s choice and audience in one statement', async () => {
    const db = t.server.ctx.db.kysely;
    expect(await findPresenceArrival(db, alice.id)).toEqual({
      choice: null,
      audience: { workspaceIds: [team], partners: [bob.id] },
    });
    const set = await t.gql('mutation { setPresence(choice: AWAY) { choice } }', {}, carol);
    expect(set.errors).toBeUndefined();
    expect(await findPresenceArrival(db, carol.id)).toEqual({
      choice: 'away',
      audience: { workspaceIds: [], partners: [] },
    });

    // What the server reads when a connection opens: that one statement. (Statements of
    // background work may land in the window: only presence's tables are counted.)
    const presence = t.server.ctx.services.presence;
    await until(() => presence.settled(), 'presence settled');
    const statements = await recordQueries(async () => {
      presence.connected(bob.id);
      await until(() => presence.settled(), 'presence settled');
    });
    presence.disconnected(bob.id);
    const reads = statements.filter((s) =>
      /"(presence_setting|workspace_member|conversation_member)"/.test(s),
    );
    expect(reads).toHaveLength(1);
    expect(reads[0]).toContain('"presence_setting"');
    expect(reads[0]).toContain('"conversation_member"');
  });
});
