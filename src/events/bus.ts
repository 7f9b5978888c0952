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
 * Delivers events to subscribers on every process. Publishers call it only after their
 * transaction has committed. Handlers must not throw; a throwing handler is logged and skipped.
 */
export interface EventBus {
  publish(event: BusEvent): Promise<void>;
  /** Subscribes to one topic; returns the function that ends the subscription. */
  subscribe(topic: string, handler: BusHandler): () => void;
  close(): Promise<void>;
}
