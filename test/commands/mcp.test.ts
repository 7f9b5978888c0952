import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildMcpServer, personByUsername } from '../../src/cli/mcp-server.js';
import {
  createTestApp,
  createTestDatabase,
  type Agent,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, inviteAndJoin, ok, setRole } from '../workspaces/_helpers.js';

import { cli } from '../cli/cli-io.js';

import { auditRows, generalOf } from './_helpers.js';

let database: TestDatabase;
let t: TestApp;
let owner: Agent, member: Agent, guest: Agent;
let serverId: string, general: string;

async function connect(username: string): Promise<Client> {
  const server = buildMcpServer(t.ctx, await personByUsername(t.ctx, username));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

const textOf = (res: Awaited<ReturnType<Client['callTool']>>) =>
  JSON.parse((res.content as Array<{ type: string; text: string }>)[0]!.text) as Record<
    string,
    any
  >;

beforeAll(async () => {
  database = await createTestDatabase();
  t = await createTestApp({ database });
  owner = await signUpAndIn(t, { username: 'ownermcp' });
  member = await signUpAndIn(t, { username: 'membermcp' });
  guest = await signUpAndIn(t, { username: 'guestmcp' });
  serverId = (await createWorkspace(t, owner, 'Mcp')).id;
  await inviteAndJoin(t, owner, serverId, [member, guest]);
  general = await generalOf(t, owner, serverId);
});
afterAll(async () => {
  await t?.close();
  await database.drop();
});

describe('svc mcp', () => {
  it('an example session: list tools, discover, run, confirm a destructive one', async () => {
    const client = await connect('ownermcp');
    const { tools } = await client.listTools();
    const names = tools.map((x) => x.name);
    expect(names).toEqual(expect.arrayContaining(['me', 'remind', 'kick', 'topic', 'discover']));
    expect(names).not.toContain('block-principal');
    expect(tools.find((x) => x.name === 'kick')!.annotations?.destructiveHint).toBe(true);

    const found = textOf(
      await client.callTool({
        name: 'discover',
        arguments: { query: 'remind me in an hour to stretch', serverId, conversationId: general },
      }),
    );
    expect(found[0].tool).toBe('remind');

    const set = textOf(
      await client.callTool({
        name: 'remind',
        arguments: { conversationId: general, in: '1h', text: 'stretch' },
      }),
    );
    expect(set).toMatchObject({ status: 'DONE' });

    // A destructive tool: the first call asks, the second, with the token, runs.
    const asked = textOf(
      await client.callTool({ name: 'kick', arguments: { serverId, user: '@guestmcp' } }),
    );
    expect(asked.status).toBe('CONFIRMATION_REQUIRED');
    expect(asked.confirmation.summary).toBe('remove @guestmcp from this workspace');
    const done = textOf(
      await client.callTool({
        name: 'kick',
        arguments: { serverId, user: '@guestmcp', confirmationToken: asked.confirmation.token },
      }),
    );
    expect(done.status).toBe('DONE');
    const replay = await client.callTool({
      name: 'kick',
      arguments: { serverId, user: '@guestmcp', confirmationToken: asked.confirmation.token },
    });
    expect(replay.isError).toBe(true);
    expect(textOf(replay).code).toBe('CONFIRMATION_STALE');

    const rows = (await auditRows(t, owner.id)).filter((r) => r.d.command === 'kick');
    expect(rows.map((r) => [r.d.initiator, r.d.outcome])).toEqual([
      ['AGENT', 'CONFIRMATION_REQUIRED'],
      ['AGENT', 'DONE'],
      ['AGENT', 'REFUSED'],
    ]);
    await client.close();
  });

  it('a Member’s agent is offered only what a Member may run, and gets the Member’s refusals', async () => {
    const client = await connect('membermcp');
    const names = (await client.listTools()).tools.map((x) => x.name);
    expect(names).toEqual(expect.arrayContaining(['me', 'shrug', 'remind', 'away', 'discover']));
    expect(names).not.toContain('kick');
    expect(names).not.toContain('timeout');
    expect(names).not.toContain('archive');
    // Not listed, still callable: the run-time check refuses it and audits the refusal.
    const res = await client.callTool({ name: 'kick', arguments: { serverId, user: '@ownermcp' } });
    expect(res.isError).toBe(true);
    expect(textOf(res).code).toBe('FORBIDDEN');
    expect((await auditRows(t, member.id)).at(-1)!.d).toMatchObject({
      command: 'kick',
      outcome: 'REFUSED',
    });
    await client.close();
  });

  it('reads the person’s roles on every list and call', async () => {
    const client = await connect('membermcp');
    expect((await client.listTools()).tools.map((x) => x.name)).not.toContain('kick');
    ok(await setRole(t, owner, serverId, member.id, 'MODERATOR'));
    expect((await client.listTools()).tools.map((x) => x.name)).toContain('kick');
    ok(await setRole(t, owner, serverId, member.id, 'MEMBER'));
    expect((await client.listTools()).tools.map((x) => x.name)).not.toContain('kick');
    // The run-time check reads the role of the moment too, not the one of the session's start.
    const res = await client.callTool({ name: 'kick', arguments: { serverId, user: '@ownermcp' } });
    expect(textOf(res).code).toBe('FORBIDDEN');
    await client.close();
  });

  it('serves over stdio from the svc binary', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/cli/index.ts', 'mcp', '--user', 'membermcp'],
      env: { ...(process.env as Record<string, string>), ...database.env, SVC_LOG_LEVEL: 'warn' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-agent', version: '1.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toContain('shrug');
    const res = textOf(
      await client.callTool({
        name: 'shrug',
        arguments: { conversationId: general, text: 'over stdio' },
      }),
    );
    expect(res.status).toBe('DONE');
    const row = (await auditRows(t, member.id)).at(-1)!;
    expect(row.d).toMatchObject({ initiator: 'AGENT', command: 'shrug', outcome: 'DONE' });
    await client.close();
  });

  it('refuses to start while ai_commands is off, or for an unknown person', async () => {
    let run = await cli(['mcp', '--user', 'membermcp'], {
      ...database.env,
      SVC_FEATURES_DISABLED: 'ai_commands',
    });
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/ai_commands.*FEATURE_DISABLED/);
    run = await cli(['mcp', '--user', 'nobody-here'], { ...database.env });
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/NOT_FOUND/);
  });
});
