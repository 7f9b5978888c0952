import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { conversationOf } from '../conversations/_helpers.js';

import { codeOf } from './_helpers.js';

// Lists that used to answer everything at once take the contract's cursor arguments
// (contract, Pagination): `instancePrincipalBlocks`, `instanceIpBlocks`, `instanceInvites` and
// `dmRequests`. Each is paged both ways, with items inserted between the pages: going on with
// `after` sees every item that was there exactly once and never a newer one; going back with
// `before` reaches the head, new items included, again exactly once each.

interface ListSpec {
  name: string;
  field: string;
  /** The item's identity in the list. */
  key: string;
  /** Who reads the list. */
  reader: () => Agent;
  /** Adds one item (newest of the list). */
  insert: (n: number) => Promise<void>;
  /** Items made before paging (fewer where each costs a new account). */
  initial: number;
}

describe('lists paged both ways under concurrent inserts', () => {
  let t: TestApp;
  let op: Agent;
  let erin: Agent;
  let serial = 0;

  beforeAll(async () => {
    t = await createTestApp();
    op = await signUpAndIn(t, { operator: true });
    erin = await signUpAndIn(t);
  });
  afterAll(async () => t?.close());

  const must = (res: { body: { errors?: unknown[]; data?: Record<string, any> | null } }) => {
    expect(res.body.errors).toBeUndefined();
    return res.body.data!;
  };

  const specs: ListSpec[] = [
    {
      name: 'principal blocks',
      field: 'instancePrincipalBlocks',
      key: 'principalId',
      initial: 5,
      reader: () => op,
      insert: async (n) => {
        must(
          await t.gql(
            'mutation($p: String!) { instanceBlockPrincipal(principalId: $p) { block { principalId } } }',
            { p: `server:peer${n}.example` },
            op,
          ),
        );
      },
    },
    {
      name: 'address blocks',
      field: 'instanceIpBlocks',
      key: 'cidr',
      initial: 5,
      reader: () => op,
      insert: async (n) => {
        must(
          await t.gql(
            'mutation($c: String!) { instanceBlockIp(cidr: $c) { cidr } }',
            {
              c: `198.51.${n}.0/24`,
            },
            op,
          ),
        );
      },
    },
    {
      name: 'instance invites',
      field: 'instanceInvites',
      key: 'id',
      reader: () => op,
      initial: 5,
      insert: async () => {
        must(await t.gql('mutation { createInstanceInvite { invite { id } } }', {}, op));
      },
    },
    {
      name: 'DM requests',
      field: 'dmRequests',
      key: 'id',
      reader: () => erin,
      initial: 3,
      insert: async () => {
        const stranger = await signUpAndIn(t);
        await conversationOf(t, stranger, [erin]);
      },
    },
  ];

  for (const spec of specs) {
    const read = async (args: Record<string, unknown>) => {
      const query = `query($a: String, $b: String, $l: Int) {
        ${spec.field}(after: $a, before: $b, limit: $l) { ${spec.key} cursor } }`;
      const data = must(await t.gql(query, args, spec.reader()));
      return data[spec.field] as Array<Record<string, string>>;
    };
    const keys = (items: Array<Record<string, string>>) => items.map((i) => i[spec.key]!);

    it(`pages ${spec.name} both ways while items are added`, async () => {
      for (let i = 0; i < spec.initial; i++) await spec.insert(++serial);
      const before = keys(await read({}));
      expect(before.length).toBeGreaterThanOrEqual(spec.initial);
      expect(new Set(before).size).toBe(before.length);

      // Forward, two at a time, with an insert between every two pages.
      const seen: string[] = [];
      let page = await read({ l: 2 });
      let last = page;
      while (page.length > 0) {
        seen.push(...keys(page));
        last = page;
        await spec.insert(++serial);
        page = await read({ a: page[page.length - 1]!.cursor, l: 2 });
      }
      expect(seen).toEqual(before);

      // Back from the oldest item to the head: every item above it, once, newest first.
      const now = keys(await read({}));
      // One insert after each of the ceil(n / 2) pages that had items.
      expect(now.length).toBe(before.length + Math.ceil(before.length / 2));
      const back: string[] = [];
      let cursor = last[last.length - 1]!.cursor;
      for (;;) {
        const prev = await read({ b: cursor, l: 2 });
        if (prev.length === 0) break;
        back.unshift(...keys(prev));
        cursor = prev[0]!.cursor;
      }
      expect(back).toEqual(now.slice(0, -1));
    });

    it(`refuses bad paging arguments of ${spec.field}`, async () => {
      const query = `query($a: String, $b: String, $l: Int) {
        ${spec.field}(after: $a, before: $b, limit: $l) { cursor } }`;
      const [first] = await read({ l: 1 });
      for (const args of [
        { a: 'not-a-cursor' },
        { a: first!.cursor, b: first!.cursor },
        { l: 0 },
        { l: 101 },
      ]) {
        expect(codeOf(await t.gql(query, args, spec.reader())), JSON.stringify(args)).toBe(
          'VALIDATION',
        );
      }
    });
  }
});
