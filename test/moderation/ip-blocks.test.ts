import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { DAY_MS, ManualClock } from '../../src/lib/clock.js';

import { auditRows, cli, codeOf } from './_helpers.js';

const BLOCK = `mutation($c: String!, $r: String, $d: Int) {
  instanceBlockIp(cidr: $c, reason: $r, expiresInDays: $d) { cidr reason createdAt expiresAt createdBy } }`;
const UNBLOCK = 'mutation($c: String!) { instanceUnblockIp(cidr: $c) { cidr } }';
const LIST = '{ instanceIpBlocks { cidr reason expiresAt createdBy } }';

/** A request to an API route from a given client address. */
const from = (t: TestApp, address: string) =>
  t.inject({ method: 'GET', url: '/api/sdl', remoteAddress: address });

describe('address blocks through GraphQL', () => {
  let t: TestApp;
  let op: Agent;
  const clock = new ManualClock(Date.UTC(2026, 2, 1));
  beforeAll(async () => {
    t = await createTestApp({ clock });
    op = await signUpAndIn(t, { operator: true });
  });
  afterAll(async () => t?.close());

  it('blocks IPv4 and IPv6 ranges with host bits cleared, enforced like the CLI', async () => {
    const v4 = await t.gql(BLOCK, { c: '203.0.113.77/24', r: 'scraper' }, op);
    expect(v4.body.data?.instanceBlockIp).toMatchObject({
      cidr: '203.0.113.0/24',
      reason: 'scraper',
      expiresAt: null,
      createdBy: op.id,
    });
    const v6 = await t.gql(BLOCK, { c: '2001:DB8:abcd:12::5/48' }, op);
    expect(v6.body.data?.instanceBlockIp.cidr).toBe('2001:db8:abcd::/48');
    const host = await t.gql(BLOCK, { c: '198.51.100.9' }, op);
    expect(host.body.data?.instanceBlockIp.cidr).toBe('198.51.100.9/32');

    expect((await from(t, '203.0.113.200')).statusCode).toBe(403);
    expect((await from(t, '203.0.113.200')).json()).toEqual({ error: 'blocked' });
    expect((await from(t, '2001:db8:abcd:ffff::1')).statusCode).toBe(403);
    expect((await from(t, '198.51.100.9')).statusCode).toBe(403);
    expect((await from(t, '198.51.100.10')).statusCode).toBe(200);

    // The CLI reads the same store.
    const list = await cli(t, ['ip', 'list']);
    expect(list.json.map((b: { cidr: string }) => b.cidr)).toEqual(
      expect.arrayContaining(['203.0.113.0/24', '2001:db8:abcd::/48', '198.51.100.9/32']),
    );
    // A block the CLI writes is listed and enforced here.
    expect((await cli(t, ['ip', 'block', '192.0.2.0/25', '--reason', 'cli'])).code).toBe(0);
    await t.ctx.services.ipBlocks.refresh();
    const gqlList = (await t.gql(LIST, {}, op)).body.data?.instanceIpBlocks;
    expect(gqlList[0]).toMatchObject({ cidr: '192.0.2.0/25', createdBy: 'cli', reason: 'cli' });
    expect((await from(t, '192.0.2.5')).statusCode).toBe(403);

    const un = await t.gql(UNBLOCK, { c: '203.0.113.1/24' }, op);
    expect(un.body.data?.instanceUnblockIp.cidr).toBe('203.0.113.0/24');
    expect((await from(t, '203.0.113.200')).statusCode).toBe(200);
    expect(codeOf(await t.gql(UNBLOCK, { c: '203.0.113.0/24' }, op))).toBe('NOT_FOUND');
  });

  it('honours expiry', async () => {
    const res = await t.gql(BLOCK, { c: '100.64.0.0/10', d: 2 }, op);
    expect(res.body.data?.instanceBlockIp.expiresAt).toBe(
      new Date(clock.now().getTime() + 2 * DAY_MS).toISOString(),
    );
    expect((await from(t, '100.64.1.1')).statusCode).toBe(403);
    clock.advance(2 * DAY_MS);
    expect((await from(t, '100.64.1.1')).statusCode).toBe(200);
    const list = (await t.gql(LIST, {}, op)).body.data?.instanceIpBlocks;
    expect(list.map((b: { cidr: string }) => b.cidr)).not.toContain('100.64.0.0/10');
    // The expiry job deletes the row; running it twice is harmless.
    expect(await t.ctx.scheduler.runOnce('ip-block-expiry')).toBe(true);
    expect(await t.ctx.scheduler.runOnce('ip-block-expiry')).toBe(true);
    const rows = await t.ctx.db.kysely.selectFrom('ip_block').select('cidr').execute();
    expect(rows.map((r) => r.cidr)).not.toContain('100.64.0.0/10');
  });

  it('refuses malformed ranges, bad expiries, long reasons and the caller’s own address', async () => {
    for (const c of [
      'not-an-ip',
      '10.0.0.0/33',
      '2001:db8::/129',
      '010.1.1.1',
      '10.0.0.0/-1',
      '',
    ]) {
      expect([c, codeOf(await t.gql(BLOCK, { c }, op))]).toEqual([c, 'VALIDATION']);
    }
    expect(codeOf(await t.gql(BLOCK, { c: '10.9.0.0/16', d: 0 }, op))).toBe('VALIDATION');
    expect(codeOf(await t.gql(BLOCK, { c: '10.9.0.0/16', r: 'r'.repeat(501) }, op))).toBe(
      'VALIDATION',
    );
    expect(codeOf(await t.gql(UNBLOCK, { c: 'nope' }, op))).toBe('VALIDATION');
    // inject() comes from 127.0.0.1: an operator cannot lock themself out.
    const self = await t.gql(BLOCK, { c: '127.0.0.0/8' }, op);
    expect(codeOf(self)).toBe('VALIDATION');
    expect(self.body.errors?.[0]?.message).toMatch(/your own address/);
  });

  it('writes an audit row for each change, with the operator as actor', async () => {
    const before = (await auditRows(t)).length;
    await t.gql(BLOCK, { c: '172.16.0.0/12', r: 'why', d: 5 }, op);
    await t.gql(UNBLOCK, { c: '172.16.0.0/12' }, op);
    // (The CLI's rows carry the real time, this app's the test clock's: filter, do not slice.)
    const rows = (await auditRows(t)).filter((r) => r.target === '172.16.0.0/12');
    expect(rows.map((r) => [r.action, r.actorId, r.target, r.reason])).toEqual([
      ['ip.block', op.id, '172.16.0.0/12', 'why'],
      ['ip.unblock', op.id, '172.16.0.0/12', null],
    ]);
    // A refused change writes nothing.
    await t.gql(BLOCK, { c: 'bad' }, op);
    expect((await auditRows(t)).length).toBe(before + 2);
  });
});
