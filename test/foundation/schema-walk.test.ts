import { buildSchema, type GraphQLArgument, type GraphQLSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp } from '../_util/app.js';
import {
  reachableFields,
  someEnumValue,
  walkDocument,
  type WalkDocument,
} from '../_util/sdl-walk.js';
import { buildWorld, PERSON_KINDS, type PersonKind, type World } from '../_util/world.js';

// Issue: a valid query answered INTERNAL (`mlsCommits { items { committedBy } }` resolved a
// non-null field to null). This makes the class impossible: in a world holding every kind of
// object, every field of every type reachable from every root query is selected, as every kind
// of person and anonymously, and no answer may carry INTERNAL, an error without a code, or a
// null in a non-null field. Documents are generated from the served SDL.

/** Codes a reader may rightly get: who they are decides what they see. */
const REFUSALS = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'VALIDATION']);

/**
 * Object types no world object reaches through a query, and why. Every other reachable type
 * must appear in some answer, so the world grows with the schema.
 */
const NOT_IN_ANY_ANSWER: Record<string, string> = {
  RegistrationChallenge: 'null unless SVC_REGISTRATION_POW_BITS is set (walked below)',
  DataExport: 'none until a person asks for one (test/data/data-export-download.test.ts)',
  MlsPendingDevice:
    'none while every device set up is in its group (linked later: test/e2ee/linked-devices.test.ts)',
};

describe('every field of every type, as every person', () => {
  let world: World;
  let schema: GraphQLSchema;

  beforeAll(async () => {
    world = await buildWorld();
    schema = buildSchema((await world.t.inject({ method: 'GET', url: '/api/sdl' })).body);
  }, 180_000);
  afterAll(async () => world?.close());

  /** Root arguments by name; a root's own cases below override them. */
  function source(owner: string, field: string, arg: GraphQLArgument): unknown {
    const { ids, people } = world;
    if (owner === 'Workspace' && field === 'member') return people.member.id;
    if (owner !== 'Query') return undefined;
    switch (arg.name) {
      case 'serverId':
        return ids.workspace;
      case 'conversationId':
        return ids.general;
      case 'id':
        return ids.general;
      case 'messageId':
        return ids.message;
      case 'userIds':
        return Object.values(people).map((p) => p.id);
      case 'query':
        if (field === 'searchMembers') return people.member.username.slice(0, 4);
        return field === 'commandDiscover' ? 'post an emote' : 'world';
      case 'includeArchived':
        return true;
      case 'incarnation':
        return ids.mlsIncarnation;
      case 'fromEpoch':
        return 0;
      case 'offerId':
        return ids.deviceLinkOffer;
      case 'offerSecret':
        return ids.deviceLinkOfferSecret;
      case 'context':
        return { serverId: ids.workspace, conversationId: ids.general };
      case 'surface':
        return someEnumValue(arg.type);
      default:
        return undefined;
    }
  }

  /** Further argument sets for roots whose answer differs by object. */
  function cases(root: string): Array<Record<string, unknown>> {
    const { ids } = world;
    const conversations = [
      ids.general,
      ids.privateChannel,
      ids.archivedChannel,
      ids.direct,
      ids.group,
      ids.encrypted,
      ids.requested,
    ];
    switch (root) {
      case 'conversation':
        return conversations.map((id) => ({ id }));
      case 'messages':
      case 'pinnedMessages':
        return conversations.map((conversationId) => ({ conversationId }));
      case 'mlsGroupState':
      case 'mlsCommits':
      case 'mlsWelcomes':
        return [{ conversationId: ids.encrypted }];
      case 'commands':
        return ['MESSAGE_BOX', 'PALETTE', 'AI'].map((surface) => ({ surface }));
      case 'searchMessages':
        return [{ query: 'world' }, { query: 'reply thread' }];
      default:
        return [{}];
    }
  }

  it('answers no INTERNAL, no error without a code and no null in a non-null field', async () => {
    const roots = Object.keys(schema.getQueryType()!.getFields());
    const selected = new Set<string>();
    const typenames = new Set<string>();
    const failures: string[] = [];
    const answered = new Set<string>();
    const docs: WalkDocument[] = roots.map((root) => walkDocument(schema, root, source));
    for (const doc of docs) {
      for (const s of doc.selected) selected.add(s);
      for (const [index, overrides] of cases(doc.root).entries()) {
        const variables = { ...doc.variables };
        for (const [arg, value] of Object.entries(overrides)) {
          const name = doc.rootVariables[arg];
          if (!name) throw new Error(`${doc.root} takes no argument ${arg}`);
          variables[name] = value;
        }
        // Every person at once (the database serves them side by side); anonymous once a root.
        const readers: Array<PersonKind | null> = [...PERSON_KINDS];
        if (index === 0) readers.push(null);
        const answers = await Promise.all(
          readers.map(async (who) => ({ who, res: await world.as(who, doc.query, variables) })),
        );
        for (const { who, res } of answers) {
          const label = `${doc.root}(${JSON.stringify(overrides)}) as ${who ?? 'anonymous'}`;
          if (res.status !== 200) failures.push(`${label}: HTTP ${res.status}`);
          for (const e of res.body.errors ?? []) {
            const code = e.extensions?.code as string | undefined;
            if (!code || !REFUSALS.has(code) || /non-nullable/.test(e.message)) {
              failures.push(
                `${label}: ${code ?? 'no code'}: ${e.message} at ${JSON.stringify((e as { path?: unknown }).path)}`,
              );
            }
          }
          if (!res.body.errors && res.body.data) answered.add(doc.root);
          collectTypenames(res.body.data, typenames);
        }
      }
    }
    expect(failures).toEqual([]);
    // The walk selected every field of every reachable type...
    const missed = [...reachableFields(schema)].filter((f) => !selected.has(f));
    expect(missed).toEqual([]);
    // ...every root answered someone in full...
    expect(roots.filter((r) => !answered.has(r))).toEqual([]);
    // ...and the world holds an object of every reachable type.
    const types = new Set([...reachableFields(schema)].map((f) => f.slice(0, f.indexOf('.'))));
    types.delete('Query');
    const absent = [...types].filter((t) => !typenames.has(t) && !(t in NOT_IN_ANY_ANSWER));
    expect(absent).toEqual([]);
  }, 120_000);
});

function collectTypenames(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectTypenames(v, into);
  } else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.__typename === 'string') into.add(o.__typename);
    for (const v of Object.values(o)) collectTypenames(v, into);
  }
}

describe('the fields only a configuration shows', () => {
  it('walks registrationChallenge while signups need a proof of work', async () => {
    const t = await createTestApp({ env: { SVC_REGISTRATION_POW_BITS: '8' } });
    try {
      const schema = buildSchema((await t.inject({ method: 'GET', url: '/api/sdl' })).body);
      const doc = walkDocument(schema, 'registrationChallenge', () => undefined);
      const res = await t.gql(doc.query, doc.variables);
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data!.registrationChallenge.__typename).toBe('RegistrationChallenge');
    } finally {
      await t.close();
    }
  });
});
