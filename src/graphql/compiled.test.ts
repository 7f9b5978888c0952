import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';

import { CompiledOperations } from './compiled.js';

const schema = buildSchema(`
  type Query { hello(name: String!): String! }
  type Mutation { count: Int! }
  type Note { id: ID! text: String }
  type Subscription { noteAdded: Note! }
`);
// The events' resolver, as the schema's subscription fields map an event to their payload.
schema.getSubscriptionType()!.getFields().noteAdded!.resolve = (event: { note: unknown }) =>
  event.note;
schema.getQueryType()!.getFields().hello!.resolve = (_root, args: { name: string }) =>
  `hello ${args.name}`;

describe('CompiledOperations', () => {
  it('runs a query interpreted, then compiled from its second run, with the same answers', async () => {
    const ops = new CompiledOperations(schema, parse('query($n: String!) { hello(name: $n) }'));
    const answers: unknown[] = [];
    const compiled: boolean[] = [];
    for (const n of ['a', 'b', 'c']) {
      answers.push(await ops.execute(undefined, { n }, {}));
      compiled.push(ops.isCompiled());
    }
    expect(compiled).toEqual([false, true, true]);
    expect(answers).toEqual([
      { data: { hello: 'hello a' } },
      { data: { hello: 'hello b' } },
      { data: { hello: 'hello c' } },
    ]);
  });

  it('answers refused variables in graphql-js words, compiled or not', async () => {
    const ops = new CompiledOperations(schema, parse('query($n: String!) { hello(name: $n) }'), {
      runsBeforeCompiling: 1,
    });
    const result = await ops.execute(undefined, { n: 5 }, {});
    expect(ops.isCompiled()).toBe(true);
    expect(result).toEqual({
      errors: [
        expect.objectContaining({
          message:
            'Variable "$n" got invalid value 5; String cannot represent a non string value: 5',
        }),
      ],
    });
  });

  it('refuses an operation name the document lacks as graphql-js does, and keeps no count of it', async () => {
    const ops = new CompiledOperations(schema, parse('query A { hello(name: "a") }'));
    for (let i = 0; i < 5; i += 1) {
      expect(await ops.execute(`Made${i}`, undefined, {})).toEqual({
        errors: [expect.objectContaining({ message: `Unknown operation named "Made${i}".` })],
      });
    }
    expect(ops.tracked).toBe(0);
    await ops.execute('A', undefined, {});
    await ops.execute('A', undefined, {});
    expect(ops.isCompiled('A')).toBe(true);
    expect(ops.tracked).toBe(1);
  });

  it('leaves a subscription of a request to graphql-js', async () => {
    const ops = new CompiledOperations(schema, parse('subscription { noteAdded { id } }'), {
      runsBeforeCompiling: 1,
    });
    await ops.execute(undefined, undefined, {});
    expect(ops.isCompiled()).toBe(false);
  });

  it('runs a subscription per event compiled, with the event as its root value', async () => {
    const ops = new CompiledOperations(schema, parse('subscription { noteAdded { id text } }'), {
      events: true,
    });
    const answers: unknown[] = [];
    for (const id of ['1', '2', '3']) {
      answers.push(await ops.execute(undefined, undefined, {}, { note: { id, text: `t${id}` } }));
    }
    expect(ops.isCompiled()).toBe(true);
    expect(answers).toEqual(
      ['1', '2', '3'].map((id) => ({ data: { noteAdded: { id, text: `t${id}` } } })),
    );
    // A query among events is not what the fan-out runs: it stays interpreted.
    const query = new CompiledOperations(schema, parse('{ hello(name: "x") }'), {
      events: true,
      runsBeforeCompiling: 1,
    });
    expect(await query.execute(undefined, undefined, {})).toEqual({ data: { hello: 'hello x' } });
    expect(query.isCompiled()).toBe(false);
  });
});
