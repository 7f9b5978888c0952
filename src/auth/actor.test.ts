import { describe, expect, it } from 'vitest';

import {
  actingAccountId,
  actorId,
  assertInstanceOperator,
  CLI_ACTOR,
  type Actor,
  type UserActor,
} from './actor.js';

const person: UserActor = {
  kind: 'user',
  accountId: 'acc-1',
  sessionId: 'ses-1',
  username: 'ada',
  deviceId: null,
  homeServer: null,
  viaOperatorSession: false,
};
const operator: UserActor = { ...person, viaOperatorSession: true };
const agent: Actor = {
  kind: 'agent',
  onBehalfOf: operator,
  grant: { id: 'g-1', actions: ['message:post'] },
};
const remote: Actor = { kind: 'remote', serverId: 'peer.example', username: 'bob' };

describe('actor', () => {
  it.each([
    ['a person', person, 'acc-1'],
    ['an agent (runs as its person)', agent, 'acc-1'],
    ['the command line', CLI_ACTOR, 'FORBIDDEN'],
    ['a remote server', remote, 'FORBIDDEN'],
  ] as const)('acting account of %s', (_name, actor, expected) => {
    if (expected === 'FORBIDDEN') {
      expect(() => actingAccountId(actor)).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
    } else {
      expect(actingAccountId(actor)).toBe(expected);
    }
  });

  it('names the audit actor as before: the account id or cli', () => {
    expect(actorId(person)).toBe('acc-1');
    expect(actorId(CLI_ACTOR)).toBe('cli');
    expect(actorId(remote)).toBe('remote:peer.example');
  });

  it.each([
    ['the command line', CLI_ACTOR, true],
    ["an operator's own session", operator, true],
    ['a person', person, false],
    ['an agent acting for an operator', agent, false],
    ['a remote server', remote, false],
  ] as const)('instance operator: %s', (_name, actor, allowed) => {
    if (allowed) expect(() => assertInstanceOperator(actor)).not.toThrow();
    else expect(() => assertInstanceOperator(actor)).toThrow(/instance operator/);
  });
});
