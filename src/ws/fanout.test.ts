import { GraphQLObjectType, GraphQLSchema, GraphQLString, parse } from 'graphql';
import pino from 'pino';
import { describe, expect, it } from 'vitest';

import { MemoryBus } from '../events/memory-bus.js';
import { LiveStream, type Verdict } from '../events/live-stream.js';
import type { GraphqlContext } from '../graphql/context.js';

import { Fanout, type Delivery } from './fanout.js';

class Stream extends LiveStream {
  readonly topic = 'workspace:w';
  readonly policy = null;
  constructor(readonly accountId: string) {
    super();
  }
  decide(): Verdict {
    return 'deliver';
  }
}

// The event runs once per group in one member's context: the resolver tells whose.
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: 'Query', fields: { x: { type: GraphQLString } } }),
  subscription: new GraphQLObjectType({
    name: 'Subscription',
    fields: {
      ran: {
        type: GraphQLString,
        resolve: (_event, _args, ctx: { who: string }) => ctx.who,
      },
    },
  }),
});

function delivery(who: string, received: string[]): Delivery {
  return {
    stream: new Stream(who),
    groupKey: 'same document',
    document: parse('subscription { ran }'),
    variables: null,
    operationName: null,
    context: { who } as unknown as GraphqlContext,
    send: (result) => void received.push(result.json),
    end: () => {},
  };
}

describe('Fanout groups', () => {
  it('runs a group’s events in the context of a member still there once the first has left', async () => {
    const bus = new MemoryBus();
    const fanout = new Fanout(bus, schema, pino({ level: 'silent' }));
    const first: string[] = [];
    const second: string[] = [];
    const a = delivery('first', first);
    await fanout.add(a);
    await fanout.add(delivery('second', second));
    fanout.remove(a);
    await bus.publish({ topic: 'workspace:w', type: 'Test', at: 0, payload: {} });
    expect(first).toEqual([]);
    expect(second.map((j) => JSON.parse(j))).toEqual([{ data: { ran: 'second' } }]);
  });
});
