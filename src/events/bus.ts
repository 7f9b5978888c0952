/**
 * One event as it travels on the bus. `topic` says who may hear it (`workspace:<id>`,
 * `user:<id>`, `conversation:<id>`); `type` is the event kind from docs/events.md.
 */
export interface BusEvent<P = Record<string, unknown>> {
  topic: string;
  type: string;
  /** Milliseconds since the epoch, set by the publisher. */
  at: number;
  payload: P;
}

export type BusHandler = (event: BusEvent) => void;

/**
 * Told that subscribers of `topics` may have missed events or received them out of order, and
 * must read the state again (docs/failures.md): null for every topic of this process.
 */
export type ResyncListener = (topics: readonly string[] | null) => void;

/**
 * Delivers events to subscribers on every process. Publishers call it only after their
 * transaction has committed. Handlers must not throw; a throwing handler is logged and skipped.
 */
export interface EventBus {
  /**
   * Hands `event` on, in the order of the calls. The event's place is taken at the call: nobody
   * needs to wait for the promise, and nothing a request answers does. It settles once the event
   * has really gone out: handed to every listener (in-process), or acknowledged by Redis, which
   * may be long after the call when Redis is away. It rejects when the event was not and will not
   * be published by this process (too many held, or the bus closed). An unawaited rejection is
   * not an unhandled one.
   */
  publish(event: BusEvent): Promise<void>;
  /**
   * Tells the subscribers of `topics`, on every process, to resync: published after the events
   * issued before it on the same topics, so it reaches them after those events. Settles as
   * `publish` does.
   */
  publishResync(topics: readonly string[]): Promise<void>;
  /** Subscribes to one topic; returns the function that ends the subscription. */
  subscribe(topic: string, handler: BusHandler): () => void;
  /** Called when subscribers must resync (above); returns the function that stops it. */
  onResync(listener: ResyncListener): () => void;
  /**
   * Whether a publish now goes straight out: false while Redis cannot be reached or events are
   * still held from an outage (the outbox's drainer then leaves rows to a process that can).
   */
  reachable(): boolean;
  close(): Promise<void>;
}

/**
 * The type of the resync signal on the wire (Redis); never an event kind. A bus hands it to its
 * resync listeners, never to the topic's handlers.
 */
export const RESYNC_TYPE = 'svc.resync';
