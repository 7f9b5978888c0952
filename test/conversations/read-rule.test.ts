import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS } from '../../src/lib/clock.js';
import type { Agent } from '../_util/app.js';
import {
  Collected,
  createWorkspace,
  joinWorkspace,
  modernClient,
  sendMessage,
  startRealtime,
  until,
  WORKSPACE_EVENTS,
  type RealtimeTestServer,
} from '../realtime/_helpers.js';
import { setRole } from '../workspaces/_helpers.js';

// "May this person read this conversation?" is asked on four paths: reading it, reporting one of
// its messages, a pipeline's trigger (only messages its owner could read), and the live stream
// of workspace events. Each person below is asked about one public channel on every path, and
// every path must answer alike (docs/messages.md, "Who may do what"). A pending invitee is in the
// contract's pending state: reading answers FORBIDDEN, and so nothing else shows them the channel
// either; an invitation past its 30 days has expired, and the person is again a workspace member
// who is not in the channel (who may read a public channel as anyone else may).
describe('who may read a conversation, on every path', () => {
  let t: RealtimeTestServer;
  let owner: Agent;
  const people: Record<string, Agent> = {};
  let serverId: string;
  let general: string;
  let open: string;
  let closed: string;
  const clients: Client[] = [];
  const streams = new Map<string, Collected>();

  /** Who may read `open`, the public channel, as the contract decides. */
  const READS: Record<string, boolean> = {
    member: true, // in the channel
    previewer: true, // a workspace member not in it
    invitee: false, // a pending invitee of it
    lapsed: true, // invited more than 30 days ago: the invitation expired
    guest: false, // a guest not in it
    outsider: false, // not in the workspace
  };

  const pending = async (conversationId: string, who: Agent, invitedAt: number) =>
    t.server.ctx.db.kysely
      .insertInto('conversation_member')
      .values({
        conversationId,
        accountId: who.id,
        state: 'pending',
        joinedAt: invitedAt,
        lastReadAt: null,
        lastReadMessageId: null,
      })
      .execute();

  beforeAll(async () => {
    t = await startRealtime();
    owner = await t.signUp();
    for (const name of Object.keys(READS)) people[name] = await t.signUp();
    const space = await createWorkspace(t, owner, 'Reading');
    serverId = space.id;
    general = space.channels.general!;
    for (const name of ['member', 'previewer', 'invitee', 'lapsed']) {
      await joinWorkspace(t, owner, people[name]!, serverId);
      // Staff, so that each may own a pipeline.
      const res = await setRole(t.app, owner, serverId, people[name]!.id, 'MODERATOR');
      expect(res.body.errors).toBeUndefined();
    }
    await joinWorkspace(t, owner, people.guest!, serverId, 'GUEST', [general]);
    const created = await t.gql(
      `mutation($s: ID!, $m: [ID!]) {
        a: createChannel(input: { serverId: $s, name: "open", memberIds: $m }) { id }
        b: createChannel(input: { serverId: $s, name: "closed", isPrivate: true }) { id }
      }`,
      { s: serverId, m: [people.member!.id] },
      owner,
    );
    expect(created.errors).toBeUndefined();
    open = created.data!.a.id;
    closed = created.data!.b.id;
    // The API invites people as pending only to encrypted group conversations today; the rule is
    // the same for a channel, so the rows are written here.
    await pending(open, people.invitee!, Date.now());
    await pending(open, people.lapsed!, Date.now() - 31 * DAY_MS);
    await pending(closed, people.invitee!, Date.now());
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await t?.stop();
  });

  it('reading the channel: FORBIDDEN for a pending invitee, NOT_FOUND for whoever may not see it', async () => {
    const codes: Record<string, string> = {};
    for (const [name, agent] of Object.entries(people)) {
      const res = await t.gql(
        'query($c: ID!) { messages(conversationId: $c) { items { id } } }',
        { c: open },
        agent,
      );
      codes[name] = res.errors?.[0]?.extensions?.code ?? 'OK';
    }
    expect(codes).toEqual({
      member: 'OK',
      previewer: 'OK',
      invitee: 'FORBIDDEN',
      lapsed: 'OK',
      guest: 'NOT_FOUND',
      outsider: 'NOT_FOUND',
    });
    // A private channel: its pending invitee is refused as such, a workspace member not in it
    // never learns it exists.
    const closedCode = async (agent: Agent) =>
      (
        await t.gql(
          'query($c: ID!) { messages(conversationId: $c) { items { id } } }',
          { c: closed },
          agent,
        )
      ).errors?.[0]?.extensions?.code;
    expect(await closedCode(people.invitee!)).toBe('FORBIDDEN');
    expect(await closedCode(people.previewer!)).toBe('NOT_FOUND');
  });

  it('the live stream shows the channel to the same people', async () => {
    for (const name of ['member', 'previewer', 'invitee', 'lapsed', 'guest']) {
      const client = modernClient(t.wsUrl, people[name]!);
      clients.push(client);
      streams.set(name, new Collected(client, WORKSPACE_EVENTS, { id: serverId }));
    }
    await until(async () => (await t.subscriptions()) === 5, 'five subscriptions');
    await sendMessage(t, owner, open, 'in the open channel');
    await sendMessage(t, owner, closed, 'in the closed channel');
    // Every subscriber is in #general: once each has this, each has had its chance at the others.
    await sendMessage(t, owner, general, 'barrier');
    const texts = (name: string) =>
      streams
        .get(name)!
        .events('workspaceEvents')
        .filter((e) => e.type === 'MessageCreated')
        .map((e) => e.payload.message?.text ?? e.payload.text);
    for (const name of streams.keys()) await until(() => texts(name).includes('barrier'), name);
    const saw = Object.fromEntries(
      [...streams.keys()].map((name) => [name, texts(name).includes('in the open channel')]),
    );
    const expected = Object.fromEntries([...streams.keys()].map((name) => [name, READS[name]]));
    expect(saw).toEqual(expected);
    for (const name of streams.keys()) {
      expect(texts(name)).not.toContain('in the closed channel');
    }
  });

  it('reporting one of its messages: NOT_FOUND for whoever may not read it', async () => {
    const messageId = await sendMessage(t, owner, open, 'a message to report');
    const reported: Record<string, boolean> = {};
    for (const [name, agent] of Object.entries(people)) {
      const res = await t.gql(
        'mutation($id: ID!) { reportMessage(messageId: $id, category: SPAM) { id } }',
        { id: messageId },
        agent,
      );
      if (res.errors) expect(res.errors[0]!.extensions!.code).toBe('NOT_FOUND');
      reported[name] = !res.errors;
    }
    expect(reported).toEqual(READS);
  });

  it('a pipeline runs on its messages only when its owner may read them', async () => {
    const owners = ['member', 'previewer', 'invitee', 'lapsed'];
    const pipelineOf = new Map<string, string>();
    for (const name of owners) {
      const res = await t.gql(
        `mutation($i: CreatePipelineInput!) { createPipeline(input: $i) { id } }`,
        {
          i: {
            serverId,
            name: `watch-${name}`,
            trigger: { kind: 'MESSAGE', pattern: 'ping*', channelIds: [open] },
            steps: [{ command: 'away', args: {} }],
          },
        },
        people[name]!,
      );
      expect(res.errors).toBeUndefined();
      pipelineOf.set(name, res.data!.createPipeline.id);
    }
    await sendMessage(t, owner, open, 'ping everyone');
    await t.server.ctx.services.commands.pipelines.idle();
    const rows = await t.server.ctx.db.kysely
      .selectFrom('audit_log')
      .select('details')
      .where('kind', '=', 'command')
      .execute();
    const ran = new Set(
      rows.map((r) => (JSON.parse(r.details ?? '{}') as { pipelineId?: string }).pipelineId),
    );
    expect(Object.fromEntries(owners.map((name) => [name, ran.has(pipelineOf.get(name))]))).toEqual(
      Object.fromEntries(owners.map((name) => [name, READS[name]])),
    );
  });
});
