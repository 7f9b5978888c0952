import { describe, expect, it } from 'vitest';

import type { UserActor } from '../../auth/actor.js';
import { newId } from '../../lib/ids.js';

import { conversationNamed, PrefetchedAccess, prefetchedAccessOf } from './prefetched-access.js';
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

  it('is carried by the person of the request only, never by one acting for them', () => {
    const prefetchedAccess = new PrefetchedAccess(CONV, 'acc1', row);
    const person: UserActor = {
      kind: 'user',
      accountId: 'acc1',
      sessionId: 's1',
      username: 'p',
      deviceId: null,
      homeServer: null,
      viaOperatorSession: false,
      prefetchedAccess,
    };
    expect(prefetchedAccessOf(person)).toBe(prefetchedAccess);
    const pipeline = {
      kind: 'pipeline' as const,
      onBehalfOf: person,
      grant: { id: 'g', actions: [] },
    };
    expect(prefetchedAccessOf(pipeline)).toBeUndefined();
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
