import type { BusEvent } from './bus.js';

/** What one subscription does with one event of its topic. */
export type Verdict = 'skip' | 'deliver' | 'deliver-end' | 'end';

/**
 * Work every stream of one topic shares before any of them decides on an event: at most one
 * database query per event per process (a membership change), never one per subscriber. It may
 * stage per-stream changes that `decide` then applies.
 */
export interface TopicPolicy {
  /** Returns a promise only when it must read the database; events of the topic wait for it. */
  prepare(event: BusEvent, streams: readonly LiveStream[]): Promise<void> | void;
}

/**
 * One bus topic of a subscription, and per event whether this subscriber may see it, decided
 * from data loaded once at subscribe and kept current by the topic's membership events. The
 * WebSocket layer fans events out to every stream of a topic and serializes each event once per
 * distinct subscription document, so a LiveStream never runs GraphQL itself.
 */
export abstract class LiveStream {
  abstract readonly topic: string;
  abstract readonly policy: TopicPolicy | null;
  /** The account the stream belongs to. */
  abstract readonly accountId: string;

  abstract decide(event: BusEvent): Verdict;
}

/**
 * What a subscription root returns: the streams (one per topic) whose events make up the
 * subscription. It is an AsyncIterable only so graphql-js accepts it from a `subscribe`
 * resolver; the WebSocket layer recognizes it and never iterates it.
 */
export class LiveSource implements AsyncIterable<never> {
  constructor(readonly streams: readonly LiveStream[]) {}

  [Symbol.asyncIterator](): AsyncIterator<never> {
    return { next: async () => ({ done: true, value: undefined as never }) };
  }
}

export function isLiveSource(value: unknown): value is LiveSource {
  return value instanceof LiveSource;
}
