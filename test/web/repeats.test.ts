import { describe, expect, it } from 'vitest';

import type { LiveEvent } from '../../web/src/api/types.js';
import { RecentEvents } from '../../web/src/state/repeats.js';

// Event delivery is at least once (docs/events.md, "Delivery"): the web client applies a
// repeated event once.

const reaction = (at: string, userId = 'u1'): LiveEvent => ({
  type: 'ReactionAdded',
  serverId: 's1',
  conversationId: 'c1',
  at,
  payload: { messageId: 'm1', emoji: '👍', userId },
});

describe('the web client skips a repeated event', () => {
  it('skips the same envelope twice, and only that', () => {
    const recent = new RecentEvents();
    expect(recent.repeated(reaction('2026-01-01T00:00:00.001Z'))).toBe(false);
    expect(recent.repeated(reaction('2026-01-01T00:00:00.001Z'))).toBe(true);
    // Another time or another person is another event.
    expect(recent.repeated(reaction('2026-01-01T00:00:00.002Z'))).toBe(false);
    expect(recent.repeated(reaction('2026-01-01T00:00:00.001Z', 'u2'))).toBe(false);
  });

  it('never skips presence and typing, which are not repeated', () => {
    const recent = new RecentEvents();
    const online: LiveEvent = {
      type: 'PresenceChanged',
      serverId: 's1',
      conversationId: null,
      at: '2026-01-01T00:00:00.001Z',
      payload: { userId: 'u1', status: 'ONLINE' },
    };
    expect(recent.repeated(online)).toBe(false);
    expect(recent.repeated(online)).toBe(false);
  });

  it('forgets the oldest beyond its size', () => {
    const recent = new RecentEvents(2);
    recent.repeated(reaction('a'));
    recent.repeated(reaction('b'));
    recent.repeated(reaction('c'));
    expect(recent.repeated(reaction('a'))).toBe(false);
    expect(recent.repeated(reaction('c'))).toBe(true);
  });
});
