import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { MINUTE_MS, ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import { createWorkspace, expectCode, inviteAndJoin, ok } from './_helpers.js';

const CREATE = 'mutation($n: String!) { createWorkspace(input: { name: $n }) { id name } }';
const CHANNELS = 'query($s: ID!) { workspace(serverId: $s) { channels { name } } }';
const CREATE_CHANNEL = 'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }';

describe('caps on workspaces and channels', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { SVC_LIMIT_WORKSPACES_PER_USER: '2', SVC_LIMIT_CHANNELS_PER_WORKSPACE: '3' },
    });
  });
  afterAll(async () => t?.close());

  it('caps the workspaces one person owns, counting hand-overs and deletions', async () => {
    const [a, b] = await Promise.all([signUpAndIn(t), signUpAndIn(t)]);
    const one = await createWorkspace(t, a, 'One');
    await createWorkspace(t, a, 'Two');
    const err = expectCode(await t.gql(CREATE, { n: 'Three' }, a), 'VALIDATION');
    expect(err.message).toMatch(/workspaces per user.*SVC_LIMIT_WORKSPACES_PER_USER/);
    expect(err.extensions?.limit).toBe(2);
    // Joining others' workspaces does not count; handing one over frees a place.
    await inviteAndJoin(t, a, one.id, [b]);
    ok(
      await t.gql(
        'mutation($i: TransferWorkspaceOwnershipInput!) { transferWorkspaceOwnership(input: $i) { id } }',
        { i: { serverId: one.id, userId: b.id } },
        a,
      ),
    );
    const three = ok(await t.gql(CREATE, { n: 'Three' }, a)).createWorkspace;
    expectCode(await t.gql(CREATE, { n: 'Four' }, a), 'VALIDATION');
    ok(
      await t.gql(
        'mutation($i: DeleteWorkspaceInput!) { deleteWorkspace(input: $i) { deleted } }',
        { i: { serverId: three.id, confirmName: 'Three' } },
        a,
      ),
    );
    ok(await t.gql(CREATE, { n: 'Four' }, a));
  });

  it('caps channels per workspace, archived ones included', async () => {
    const a = await signUpAndIn(t);
    const ws = await createWorkspace(t, a, 'Channels');
    const third = ok(
      await t.gql(CREATE_CHANNEL, { i: { serverId: ws.id, name: 'third', isPrivate: true } }, a),
    ).createChannel;
    ok(
      await t.gql(
        'mutation($c: ID!) { archiveChannel(conversationId: $c) { id } }',
        { c: third.id },
        a,
      ),
    );
    const err = expectCode(
      await t.gql(CREATE_CHANNEL, { i: { serverId: ws.id, name: 'fourth' } }, a),
      'VALIDATION',
    );
    expect(err.message).toMatch(/channels per workspace.*SVC_LIMIT_CHANNELS_PER_WORKSPACE/);
    const chans = ok(await t.gql(CHANNELS, { s: ws.id }, a)).workspace.channels;
    expect(chans.map((c: { name: string }) => c.name)).toEqual(['general', 'random']);
  });
});

describe('default channels under a small channel cap', () => {
  it('gives a new workspace only the default channels the cap allows', async () => {
    const t = await createTestApp({ env: { SVC_LIMIT_CHANNELS_PER_WORKSPACE: '1' } });
    try {
      const a = await signUpAndIn(t);
      const ws = await createWorkspace(t, a, 'Tiny');
      const chans = ok(await t.gql(CHANNELS, { s: ws.id }, a)).workspace.channels;
      expect(chans.map((c: { name: string }) => c.name)).toEqual(['general']);
      expectCode(
        await t.gql(CREATE_CHANNEL, { i: { serverId: ws.id, name: 'more' } }, a),
        'VALIDATION',
      );
    } finally {
      await t.close();
    }
  });
});

describe('probation', () => {
  it('refuses creating a workspace during probation, saying when in minutes rounded up', async () => {
    const clock = new ManualClock(Date.parse('2030-05-01T00:00:00Z'));
    const t = await createTestApp({ clock, env: { SVC_PROBATION_HOURS: '2' } });
    try {
      const a = await signUpAndIn(t);
      let err = expectCode(await t.gql(CREATE, { n: 'Early' }, a), 'VALIDATION');
      expect(err.message).toMatch(/probation.*in 120 minutes/);
      clock.advance(90 * MINUTE_MS + 1);
      err = expectCode(await t.gql(CREATE, { n: 'Early' }, a), 'VALIDATION');
      expect(err.message).toMatch(/in 30 minutes/);
      clock.advance(30 * MINUTE_MS - 2);
      err = expectCode(await t.gql(CREATE, { n: 'Early' }, a), 'VALIDATION');
      expect(err.message).toMatch(/in 1 minute\b/);
      clock.advance(1);
      ok(await t.gql(CREATE, { n: 'Early' }, a));
      // The direct space is there during probation too.
      const mine = ok(await t.gql('{ myWorkspaces { id } }', {}, a)).myWorkspaces;
      expect(mine[0].id).toBe(DIRECT_SPACE_ID);
    } finally {
      await t.close();
    }
  });
});
