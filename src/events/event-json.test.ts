import { describe, expect, it } from 'vitest';

import type { BusEvent } from './bus.js';
import { eventJson, payloadJson } from './event-json.js';

describe('event JSON', () => {
  it('writes what JSON.stringify writes of an event', () => {
    const events: BusEvent[] = [
      { topic: 'workspace:w1', type: 'MessageCreated', at: 1764300000123, payload: { a: 1 } },
      {
        topic: 'user:"quoted"\\\u2028',
        type: 'Typing',
        at: 0,
        payload: { text: 'line\nbreak ✓ 東京', nested: { list: [1, null, 'x'] }, gone: undefined },
      },
      { topic: 't', type: 'x', at: 5, payload: {} },
    ];
    for (const event of events) {
      expect(eventJson(event)).toBe(JSON.stringify(event));
      expect(payloadJson(event)).toBe(JSON.stringify(event.payload));
    }
  });

  it('serializes a payload once for the outbox row and the publish', () => {
    let serialized = 0;
    const payload = {
      toJSON() {
        serialized += 1;
        return { n: serialized };
      },
    };
    const event = { topic: 't', type: 'x', at: 1, payload } as unknown as BusEvent;
    const row = payloadJson(event);
    const published = eventJson(event);
    expect(serialized).toBe(1);
    expect(JSON.parse(published)).toEqual({ topic: 't', type: 'x', at: 1, payload: { n: 1 } });
    expect(row).toBe('{"n":1}');
    // Another payload object is serialized for itself.
    const other = { topic: 't', type: 'x', at: 2, payload: { ...payload } } as unknown as BusEvent;
    expect(JSON.parse(eventJson(other)).payload).toEqual({ n: 2 });
  });
});
