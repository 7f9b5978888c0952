import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildGraphqlExecutor } from '../../src/graphql/build.js';
import { MAX_COMPILED_FIELDS } from '../../src/graphql/compiled.js';
import {
  agentHeaders,
  createTestApp,
  TEST_DB,
  type Agent,
  type GqlResponse,
  type TestApp,
} from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { MESSAGE_FIELDS, send, sharedChannel } from '../conversations/_helpers.js';

/** A response without what differs between any two requests (the request id). */
const comparable = (r: GqlResponse) =>
  JSON.parse(JSON.stringify(r.body), (key, value: unknown) =>
    key === 'request_id' ? undefined : value,
  ) as unknown;

// A document's operations run interpreted by graphql-js the first time, then compiled
// (src/graphql/compiled.ts). The rest of the suite runs every document compiled from its first
// run (test/_util/app.ts); here the server's default is kept, and each answer of the compiled
// operation must be the interpreted one's.
describe(`compiled documents (${TEST_DB})`, () => {
  let t: TestApp;
  let ann: Agent;
  let bob: Agent;
  let channelId: string;

  beforeAll(async () => {
    t = await createTestApp({ http: { graphql: buildGraphqlExecutor() } });
    ann = await signUpAndIn(t, { username: 'anncompiled' });
    bob = await signUpAndIn(t, { username: 'bobcompiled' });
    channelId = await sharedChannel(t, bob, [ann], 'Compiled');
    const first = await send(t, bob, channelId, 'first, with a link https://example.invalid/x');
    await send(t, ann, channelId, 'a reply', first.id as string);
    await send(t, ann, channelId, 'second');
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Runs `query` three times; the three answers, and whether it ran compiled after each. */
  const thrice = async (query: string, variables: Record<string, unknown>, agent: Agent) => {
    const answers: unknown[] = [];
    const compiled: boolean[] = [];
    for (let i = 0; i < 3; i += 1) {
      answers.push(comparable(await t.gql(query, variables, agent)));
      const prepared = t.graphql.prepare(query);
      compiled.push(prepared.ok && prepared.doc.operations.isCompiled());
    }
    return { answers, compiled };
  };

  it('answers a page of messages the same, interpreted and then compiled', async () => {
    const query = `query($c: ID!) { messages(conversationId: $c, limit: 10) {
      items { ${MESSAGE_FIELDS} } hasMore nextCursor prevCursor } }`;
    const { answers, compiled } = await thrice(query, { c: channelId }, ann);
    expect(compiled).toEqual([false, true, true]);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    const items = (answers[0] as { data: { messages: { items: Array<{ text: string }> } } }).data
      .messages.items;
    expect(items.map((m) => m.text)).toEqual([
      'first, with a link https://example.invalid/x',
      'second',
    ]);
  });

  it('answers a contract error the same, with its code and path', async () => {
    const query = 'query($c: ID!) { messages(conversationId: $c) { items { id } } }';
    const { answers, compiled } = await thrice(query, { c: 'no-such-conversation' }, ann);
    expect(compiled).toEqual([false, true, true]);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0]).toMatchObject({
      data: null,
      errors: [{ path: ['messages'], extensions: { code: expect.any(String) } }],
    });
  });

  it('refuses variables of the wrong type the same, without a code', async () => {
    const query = 'query($c: ID!, $l: Int) { messages(conversationId: $c, limit: $l) { hasMore } }';
    const { answers } = await thrice(query, { c: channelId, l: 'ten' }, ann);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    const errors = (answers[0] as { errors: Array<{ message: string; extensions: object }> })
      .errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/\$l/);
    expect(errors[0]!.extensions).toEqual({});
  });

  it('runs the fields of a mutation one after another, compiled too', async () => {
    const query = `mutation($c: ID!, $a: String!, $b: String!) {
      one: sendMessage(input: { conversationId: $c, text: $a }) { id text createdAt }
      two: sendMessage(input: { conversationId: $c, text: $b }) { id text createdAt } }`;
    const orders: string[][] = [];
    for (let i = 0; i < 2; i += 1) {
      const body = (await t.gql(query, { c: channelId, a: `a${i}`, b: `b${i}` }, bob)).body;
      expect(body.errors).toBeUndefined();
      orders.push([body.data!.one.text, body.data!.two.text]);
    }
    const prepared = t.graphql.prepare(query);
    expect(prepared.ok && prepared.doc.operations.isCompiled()).toBe(true);
    const page = (
      await t.gql(
        'query($c: ID!) { messages(conversationId: $c, limit: 4) { items { text } } }',
        { c: channelId },
        ann,
      )
    ).body.data!.messages.items.map((m: { text: string }) => m.text);
    expect(orders).toEqual([
      ['a0', 'b0'],
      ['a1', 'b1'],
    ]);
    expect(page).toEqual(['a0', 'b0', 'a1', 'b1']);
  });

  it('leaves an operation of more than MAX_COMPILED_FIELDS fields interpreted', async () => {
    const aliases = Array.from({ length: 100 }, (_, i) => `m${i}: me { id username }`);
    const query = `query { ${aliases.join(' ')} }`;
    expect(aliases.length * 3).toBeGreaterThan(MAX_COMPILED_FIELDS);
    const { answers, compiled } = await thrice(query, {}, ann);
    expect(compiled).toEqual([false, false, false]);
    expect(answers[2]).toEqual(answers[0]);
    expect((answers[0] as { data: Record<string, unknown> }).data.m99).toEqual({
      id: ann.id,
      username: 'anncompiled',
    });
  });

  it('compiles each operation of a document on its own', async () => {
    const query = `query A { me { id } } query B { me { username } }`;
    const run = (operationName: string) =>
      t.inject({
        method: 'POST',
        url: '/api',
        headers: { 'content-type': 'application/json', ...agentHeaders(ann) },
        payload: JSON.stringify({ query, operationName }),
      });
    await run('A');
    await run('A');
    const b = await run('B');
    const prepared = t.graphql.prepare(query);
    expect(prepared.ok && prepared.doc.operations.isCompiled('A')).toBe(true);
    expect(prepared.ok && prepared.doc.operations.isCompiled('B')).toBe(false);
    expect(b.json()).toEqual({ data: { me: { username: 'anncompiled' } } });
  });
});
