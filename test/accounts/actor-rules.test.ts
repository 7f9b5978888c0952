import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CLI_ACTOR, type Actor, type UserActor } from '../../src/auth/actor.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

// Rules of the accounts area that depend on the kind of actor.

const actorOf = (a: Agent, viaOperatorSession = false): UserActor => ({
  kind: 'user',
  accountId: a.id,
  sessionId: 'test-session',
  username: a.username,
  deviceId: null,
  homeServer: null,
  viaOperatorSession,
});

describe('accounts and actors', () => {
  let t: TestApp;
  let ada: Agent, bob: Agent;

  beforeAll(async () => {
    t = await createTestApp();
    ada = await signUpAndIn(t, { username: 'adaactor', operator: true });
    bob = await signUpAndIn(t, { username: 'bobactor' });
  });
  afterAll(() => t.close());

  it('grants the operator role on the command line only', async () => {
    const accounts = t.ctx.services.accounts;
    await expect(
      accounts.setOperatorByUsername(actorOf(ada, true), bob.username, true),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await accounts.setOperatorByUsername(CLI_ACTOR, bob.username, true)).toMatchObject({
      isOperator: true,
    });
    await accounts.setOperatorByUsername(CLI_ACTOR, bob.username, false);
  });

  it('shows private fields to the person alone, not to software acting for them', () => {
    const accounts = t.ctx.services.accounts;
    const agent: Actor = {
      kind: 'agent',
      onBehalfOf: actorOf(ada),
      grant: { id: 'grant-1', actions: ['message:post'] },
    };
    expect(accounts.seesPrivateFields(actorOf(ada), ada.id)).toBe(true);
    expect(accounts.seesPrivateFields(actorOf(bob), ada.id)).toBe(false);
    expect(accounts.seesPrivateFields(agent, ada.id)).toBe(false);
    expect(accounts.seesPrivateFields(CLI_ACTOR, ada.id)).toBe(false);
    expect(accounts.seesPrivateFields(null, ada.id)).toBe(false);
  });

  it('refuses session-only actions to anyone but a signed-in person', async () => {
    await expect(
      t.ctx.services.accounts.changePassword(CLI_ACTOR, {
        currentPassword: 'x',
        newPassword: 'a much longer new password',
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
