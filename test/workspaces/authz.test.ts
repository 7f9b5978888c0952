import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CLI_ACTOR, type Actor, type UserActor } from '../../src/auth/actor.js';
import type { Action } from '../../src/auth/policy.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import { createWorkspace, inviteAndJoin, ok, setRole } from './_helpers.js';

// The authorization service over the action catalogue: NOT_FOUND for a non-member, FORBIDDEN
// for a role that may not, the role read once per request (actor object) until `forget`.

const actorOf = (a: Agent): UserActor => ({
  kind: 'user',
  accountId: a.id,
  sessionId: 'test-session',
  username: a.username,
  deviceId: null,
  homeServer: null,
  viaOperatorSession: false,
});

describe('authz', () => {
  let t: TestApp;
  let owner: Agent, member: Agent, outsider: Agent;
  let ws: { id: string };

  beforeAll(async () => {
    t = await createTestApp();
    [owner, member, outsider] = await Promise.all(
      ['owner', 'member', 'outsider'].map((u) => signUpAndIn(t, { username: `${u}az` })),
    );
    ws = await createWorkspace(t, owner, 'Authz');
    await inviteAndJoin(t, owner, ws.id, [member]);
  });
  afterAll(() => t.close());

  it('answers by role, and hides the workspace from a non-member', async () => {
    const authz = t.ctx.services.authz;
    const scope = { workspaceId: ws.id };
    expect(await authz.can(actorOf(owner), 'workspace:delete', scope)).toBe(true);
    expect(await authz.can(actorOf(member), 'workspace:delete', scope)).toBe(false);
    expect(await authz.can(actorOf(outsider), 'workspace:read', scope)).toBe(false);
    await expect(authz.assertCan(actorOf(member), 'workspace:delete', scope)).rejects.toMatchObject(
      { code: 'FORBIDDEN' },
    );
    await expect(authz.assertCan(actorOf(outsider), 'workspace:read', scope)).rejects.toMatchObject(
      { code: 'NOT_FOUND' },
    );
    expect(await authz.assertCan(actorOf(member), 'message:post', scope)).toMatchObject({
      role: 'member',
    });
  });

  it('gives the command line and remote servers no workspace role', async () => {
    const scope = { workspaceId: ws.id };
    const remote: Actor = { kind: 'remote', serverId: 'peer.example', username: null };
    expect(await t.ctx.services.authz.can(CLI_ACTOR, 'workspace:read', scope)).toBe(false);
    expect(await t.ctx.services.authz.can(remote, 'workspace:read', scope)).toBe(false);
  });

  it('lets a delegated actor take only what its grant names and its person may', async () => {
    const scope = { workspaceId: ws.id };
    const agent = (actions: readonly Action[]): Actor => ({
      kind: 'agent',
      onBehalfOf: actorOf(member),
      grant: { id: 'grant-1', actions },
    });
    const authz = t.ctx.services.authz;
    expect(await authz.can(agent(['message:post']), 'message:post', scope)).toBe(true);
    expect(await authz.can(agent(['message:pin']), 'message:post', scope)).toBe(false);
    // Granted, but the person's role does not allow it.
    expect(await authz.can(agent(['workspace:delete']), 'workspace:delete', scope)).toBe(false);
  });

  it('reads the role once per actor object, again after forget', async () => {
    const authz = t.ctx.services.authz;
    const scope = { workspaceId: ws.id };
    const request = actorOf(member);
    expect(await authz.role(request, scope)).toBe('member');
    ok(await setRole(t, owner, ws.id, member.id, 'MODERATOR'));
    // The same request keeps what it read; a new request (actor) sees the change.
    expect(await authz.role(request, scope)).toBe('member');
    expect(await authz.role(actorOf(member), scope)).toBe('moderator');
    // A read inside a transaction's executor is fresh and refreshes the memo.
    expect(await authz.role(request, { ...scope, db: t.ctx.db.kysely })).toBe('moderator');
    ok(await setRole(t, owner, ws.id, member.id, 'MEMBER'));
    expect(await authz.role(request, scope)).toBe('moderator');
    authz.forget(request, ws.id);
    expect(await authz.role(request, scope)).toBe('member');
  });
});
