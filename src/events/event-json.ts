import type { BusEvent } from './bus.js';

// An event is written as JSON twice on the way out of a process on Redis: its payload into the
// outbox row, in the transaction, and the whole event into the Redis publish after the commit.
// The payload's JSON is made once and both use it (bench `instructions`: a send's payload was
// serialized twice, about 12,000 instructions each).

const payloads = new WeakMap<object, string>();

/** The JSON of `event`'s payload, made once per payload object. */
export function payloadJson(event: BusEvent): string {
  const payload = event.payload as object;
  let json = payloads.get(payload);
  if (json === undefined) {
    json = JSON.stringify(payload) ?? 'null';
    payloads.set(payload, json);
  }
  return json;
}

/** `event` as JSON, as `JSON.stringify` writes its four fields, the payload's JSON reused. */
export function eventJson(event: BusEvent): string {
  return (
    `{"topic":${JSON.stringify(event.topic)},"type":${JSON.stringify(event.type)},` +
    `"at":${JSON.stringify(event.at ?? null)},"payload":${payloadJson(event)}}`
  );
}
