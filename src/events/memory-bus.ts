import {
  RESYNC_TYPE,
  type BusEvent,
  type BusHandler,
  type EventBus,
  type ResyncListener,
} from './bus.js';

/** The in-process bus: one process, no network; the default without SVC_REDIS_URL. */
export class MemoryBus implements EventBus {
  private readonly topics = new Map<string, Set<BusHandler>>();
  private readonly resyncListeners = new Set<ResyncListener>();

  constructor(
    private readonly onHandlerError: (err: unknown, event: BusEvent) => void = () => {},
  ) {}

  /** Every handler of the topic has the event when this returns (the promise is settled). */
  async publish(event: BusEvent): Promise<void> {
    this.deliver(event);
  }

  async publishResync(topics: readonly string[]): Promise<void> {
    for (const listener of [...this.resyncListeners]) {
      try {
        listener(topics);
      } catch (err) {
        this.onHandlerError(err, {
          topic: topics.join(','),
          type: RESYNC_TYPE,
          at: 0,
          payload: {},
        });
      }
    }
  }

  onResync(listener: ResyncListener): () => void {
    this.resyncListeners.add(listener);
    return () => void this.resyncListeners.delete(listener);
  }

  reachable(): boolean {
    return true;
  }

  /** Hands an event to this process's subscribers of its topic. */
  deliver(event: BusEvent): void {
    const handlers = this.topics.get(event.topic);
    if (!handlers) return;
    for (const handler of [...handlers]) {
      try {
        handler(event);
      } catch (err) {
        this.onHandlerError(err, event);
      }
    }
  }

  subscribe(topic: string, handler: BusHandler): () => void {
    let handlers = this.topics.get(topic);
    if (!handlers) {
      handlers = new Set();
      this.topics.set(topic, handlers);
    }
    handlers.add(handler);
    return () => {
      const set = this.topics.get(topic);
      if (!set) return;
      set.delete(handler);
      if (set.size === 0) this.topics.delete(topic);
    };
  }

  /** Number of topics with at least one subscriber (released with the last one). */
  topicCount(): number {
    return this.topics.size;
  }

  async close(): Promise<void> {
    this.topics.clear();
    this.resyncListeners.clear();
  }
}
