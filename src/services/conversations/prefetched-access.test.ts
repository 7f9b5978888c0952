import { describe, expect, it } from 'vitest';

import type { UserActor } from '../../auth/actor.js';
import { newId } from '../../lib/ids.js';

import type { Db } from '../../db/database.js';
import { Authz } from '../authz/authz.js';

import {
  conversationNamed,
  PREFETCHED_ACCESS,
  PrefetchedAccess,
  prefetchedAccessOf,
} from './prefetched-access.js';
import type { ConversationAccessRow } from './queries.js';

const CONV = newId();
const OTHER = newId();
const row = { id: CONV } as ConversationAccessRow;

describe('PrefetchedAccess', () => {
  it('answers the first check of its conversation and account, once', () => {
    const p = new PrefetchedAccess(CONV, 'acc1', row);
    expect(p.take(OTHER, 'acc1')).toBeNull();
    expect(p.take(CONV, 'acc2')).toBeNull();
    expect(p.take(CONV, 'acc1')).toEqual({ row });
    expect(p.take(CONV, 'acc1')).toBeNull();
  });

  it('answers a conversation that does not exist as a row of none', () => {
    const p = new PrefetchedAccess(CONV, 'acc1', undefined);
    expect(p.take(CONV, 'acc1')).toEqual({ row: undefined });
  });

  it("primes the request's Authz memo for the person only, never for one acting for them", () => {
    // The memo does not read the database: no connection is needed to prime it.
    const authz = new Authz(null as unknown as Db, () => Promise.resolve(undefined));
    const prefetchedAccess = new PrefetchedAccess(CONV, 'acc1', row);
    const person = (): UserActor => ({
      kind: 'user',
      accountId: 'acc1',
      sessionId: 's1',
      username: 'p',
      deviceId: null,
      homeServer: null,
      viaOperatorSession: false,
    });
    const actor = person();
    expect(prefetchedAccessOf(authz, actor)).toBeUndefined();
    authz.prime(actor, PREFETCHED_ACCESS, prefetchedAccess);
    expect(prefetchedAccessOf(authz, actor)).toBe(prefetchedAccess);
    // Another request's actor of the same session has a memo of its own.
    expect(prefetchedAccessOf(authz, person())).toBeUndefined();
    const pipeline = {
      kind: 'pipeline' as const,
      onBehalfOf: actor,
      grant: { id: 'g', actions: [] },
    };
    expect(prefetchedAccessOf(authz, pipeline)).toBeUndefined();
  });

  it('takes the conversation from conversationId or input.conversationId, if it can be an id', () => {
    expect(conversationNamed({ conversationId: CONV })).toBe(CONV);
    expect(conversationNamed({ input: { conversationId: CONV, text: 'x' } })).toBe(CONV);
    expect(conversationNamed({ conversationId: 'not an id' })).toBeNull();
    expect(conversationNamed({ conversationId: 42 })).toBeNull();
    expect(conversationNamed({ input: [CONV] })).toBeNull();
    expect(conversationNamed({ id: CONV })).toBeNull();
  });
});
