import { expect } from 'vitest';

import { workspaceTopic } from '../../src/events/catalog.js';
import type { BusEvent } from '../../src/events/bus.js';
import type { Agent, GqlResponse, TestApp } from '../_util/app.js';

/** The data of a response that must have succeeded. */
export function ok(res: GqlResponse): Record<string, any> {
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data!;
}

/** The first error's code (and the error), asserting it is `code`. */
export function expectCode(res: GqlResponse, code: string) {
  const err = res.body.errors?.[0];
  expect(err?.extensions?.code, JSON.stringify(res.body)).toBe(code);
  return err!;
}

export const WORKSPACE_FIELDS =
  'id name description isDirect ownerId role myRole myTimedOutUntil memberCount';

export async function createWorkspace(
  t: TestApp,
  agent: Agent,
  name: string,
  description?: string,
): Promise<{ id: string; name: string }> {
  const res = await t.gql(
    `mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { ${WORKSPACE_FIELDS} } }`,
    { i: { name, description } },
    agent,
  );
  return ok(res).createWorkspace;
}

/** Creates an invite as `by` and joins with it as each of `joiners`. */
export async function inviteAndJoin(
  t: TestApp,
  by: Agent,
  serverId: string,
  joiners: Agent[],
  extra: Record<string, unknown> = {},
): Promise<string> {
  const created = ok(
    await t.gql(
      'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token } }',
      { i: { serverId, ...extra } },
      by,
    ),
  ).createWorkspaceInvite;
  for (const j of joiners) {
    ok(
      await t.gql(
        'mutation($t: String!) { joinWorkspace(token: $t) { id } }',
        { t: created.token },
        j,
      ),
    );
  }
  return created.token as string;
}

export async function setRole(
  t: TestApp,
  by: Agent,
  serverId: string,
  userId: string,
  role: string,
) {
  return t.gql(
    'mutation($i: SetMemberRoleInput!) { setMemberRole(input: $i) { role user { id } } }',
    { i: { serverId, userId, role } },
    by,
  );
}

/** Records every event published on a workspace's topic from now on. */
export function recordEvents(t: TestApp, serverId: string) {
  const events: BusEvent[] = [];
  const stop = t.ctx.bus.subscribe(workspaceTopic(serverId), (e) => events.push(e));
  return {
    events,
    stop,
    ofType: (type: string) => events.filter((e) => e.type === type),
    clear: () => events.splice(0, events.length),
  };
}

export { startSmtp, type CapturedMail } from '../_util/smtp.js';

export async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  for (let waited = 0; waited < ms && !check(); waited += 25) {
    await new Promise((r) => setTimeout(r, 25));
  }
}
