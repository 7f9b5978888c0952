import { GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';

import type { BusEvent, EventBus } from '../events/bus.js';
import { whenSubscribed } from '../events/redis-bus.js';
import { CompiledOperations } from '../graphql/compiled.js';
import type { GraphqlContext } from '../graphql/context.js';
import { formatError } from '../graphql/format-error.js';

import type { LiveStream, Verdict } from '../events/live-stream.js';

import { EncodedResult } from './frames.js';

/** One subscription as the hub sees it: its stream, its document, and how to reach it. */
export interface Delivery {
  readonly stream: LiveStream;
  /**
   * Subscriptions with the same key share one serialization of each event. `add` replaces it
   * with the equal string its group already holds, so a group keeps one copy of the key.
   */
  groupKey: string;
  readonly document: DocumentNode;
  readonly variables: Record<string, unknown> | null;
  readonly operationName: string | null;
  readonly context: GraphqlContext;
  /** Writes one serialized execution result, wrapped in this subscription's envelope. */
  send(result: EncodedResult): void;
  /** Ends the subscription from the server's side (the client gets `complete`). */
  end(): void;
}

interface Group {
  readonly key: string;
  /** The member whose context runs the group's events: a live one, never one that left. */
  first: Delivery;
  readonly members: Set<Delivery>;
}

interface TopicChannel {
  readonly topic: string;
  readonly groups: Map<string, Group>;
  size: number;
  unsubscribe: () => void;
  /** Set while the topic's policy reads the database; later events wait in `backlog`. */
  busy: boolean;
  backlog: Array<BusEvent | typeof RESYNC>;
}

/** In a topic's backlog: its subscriptions end there, after the events before it. */
const RESYNC = Symbol('resync');

/**
 * Fan-out of bus events to subscriptions on this process. Per topic there is one bus
 * subscription, released with the last subscriber. Per event: the topic's policy runs once
 * (at most one query, for membership events), each subscriber decides from its cached access,
 * and the event is executed and serialized once per distinct document and variables, the same
 * string then written to every socket of the group. Everything after the policy is synchronous,
 * so events keep their bus order, and a socket write never waits for a slow client.
 */
export class Fanout {
  private readonly channels = new Map<string, TopicChannel>();
  /** Events executed and serialized so far (once per event and distinct document). */
  serializations = 0;

  /** Each subscription document's operations, run per event (compiled.ts, `events`). */
  private readonly operations = new WeakMap<DocumentNode, CompiledOperations>();

  constructor(
    private readonly bus: EventBus,
    private readonly schema: GraphQLSchema,
    private readonly log: Logger,
    /** Runs of a document before its events run compiled (compiled.ts); default 2. */
    private readonly runsBeforeCompiling?: number,
  ) {
    // After a Redis outage events may have been missed, and after a drainer published events
    // their writer could not, they came out of order: end the live subscriptions concerned (the
    // client gets `complete`), so that clients resubscribe and refetch instead of showing a gap.
    bus.onResync((topics) => (topics === null ? this.endAll() : this.resyncTopics(topics)));
  }

  /** Ends every subscription from the server's side. */
  endAll(): void {
    this.end([...this.channels.values()]);
  }

  /** Ends the subscriptions of `topics`, each after the events its topic received before. */
  private resyncTopics(topics: readonly string[]): void {
    const now: TopicChannel[] = [];
    for (const topic of topics) {
      const channel = this.channels.get(topic);
      if (!channel) continue;
      if (channel.busy) channel.backlog.push(RESYNC);
      else now.push(channel);
    }
    this.end(now);
  }

  private end(channels: TopicChannel[]): void {
    const deliveries = channels.flatMap((c) =>
      [...c.groups.values()].flatMap((g) => [...g.members]),
    );
    for (const delivery of deliveries) {
      this.remove(delivery);
      delivery.end();
    }
    if (deliveries.length > 0)
      this.log.info({ subscriptions: deliveries.length }, 'ended subscriptions to resync');
  }

  /** Registers a subscription; resolves once its topic is live on the bus. */
  add(delivery: Delivery): Promise<void> {
    const topic = delivery.stream.topic;
    let channel = this.channels.get(topic);
    if (!channel) {
      const created: TopicChannel = {
        topic,
        groups: new Map(),
        size: 0,
        unsubscribe: () => {},
        busy: false,
        backlog: [],
      };
      created.unsubscribe = this.bus.subscribe(topic, (event) => this.onEvent(created, event));
      this.channels.set(topic, created);
      channel = created;
    }
    let group = channel.groups.get(delivery.groupKey);
    if (!group) {
      group = { key: delivery.groupKey, first: delivery, members: new Set() };
      channel.groups.set(group.key, group);
    } else {
      delivery.groupKey = group.key;
    }
    if (!group.members.has(delivery)) {
      group.members.add(delivery);
      channel.size += 1;
    }
    return whenSubscribed(this.bus, topic);
  }

  remove(delivery: Delivery): void {
    const channel = this.channels.get(delivery.stream.topic);
    const group = channel?.groups.get(delivery.groupKey);
    if (!channel || !group || !group.members.delete(delivery)) return;
    channel.size -= 1;
    if (group.members.size === 0) channel.groups.delete(delivery.groupKey);
    else if (group.first === delivery) group.first = group.members.values().next().value!;
    if (channel.size === 0) {
      channel.unsubscribe();
      this.channels.delete(channel.topic);
    }
  }

  /** Topics with at least one local subscriber. */
  topicCount(): number {
    return this.channels.size;
  }

  private onEvent(channel: TopicChannel, event: BusEvent): void {
    if (channel.busy) {
      channel.backlog.push(event);
      return;
    }
    this.process(channel, event);
  }

  private process(channel: TopicChannel, event: BusEvent): void {
    const pending = this.prepare(channel, event);
    const after = pending
      ? pending.then(() => this.deliver(channel, event))
      : this.deliver(channel, event);
    if (!after) return;
    channel.busy = true;
    after
      .catch((err: unknown) =>
        this.log.error({ err, topic: channel.topic }, 'event fan-out failed'),
      )
      .finally(() => {
        channel.busy = false;
        while (
          !channel.busy &&
          channel.backlog.length > 0 &&
          this.channels.get(channel.topic) === channel
        ) {
          const next = channel.backlog.shift()!;
          if (next === RESYNC) this.end([channel]);
          else this.process(channel, next);
        }
      });
  }

  private prepare(channel: TopicChannel, event: BusEvent): Promise<void> | undefined {
    const streams: LiveStream[] = [];
    for (const group of channel.groups.values()) {
      for (const d of group.members) streams.push(d.stream);
    }
    const policy = streams[0]?.policy;
    if (!policy) return undefined;
    const result = policy.prepare(event, streams);
    if (!result) return undefined;
    // A failed read leaves the cached access as it was: log it and deliver on what is known.
    return result.catch((err: unknown) =>
      this.log.error({ err, topic: channel.topic, type: event.type }, 'membership refresh failed'),
    );
  }

  /** Decides and sends for every group; returns a promise only if a document resolved async. */
  private deliver(channel: TopicChannel, event: BusEvent): Promise<void> | undefined {
    return this.deliverGroups([...channel.groups.values()], event);
  }

  private deliverGroups(groups: Group[], event: BusEvent): Promise<void> | undefined {
    for (let i = 0; i < groups.length; i += 1) {
      const group = groups[i]!;
      const targets: Array<[Delivery, Verdict]> = [];
      let anyDelivery = false;
      for (const d of group.members) {
        const verdict = d.stream.decide(event);
        if (verdict === 'skip') continue;
        targets.push([d, verdict]);
        if (verdict !== 'end') anyDelivery = true;
      }
      if (targets.length === 0) continue;
      const json = anyDelivery ? this.serialize(group.first, event) : '';
      if (typeof json !== 'string') {
        // Event fields are meant to resolve synchronously; if one does not, later groups wait
        // for it so the order of events stays the same for everyone.
        return json.then((text) => {
          finish(targets, text);
          return this.deliverGroups(groups.slice(i + 1), event);
        });
      }
      finish(targets, json);
    }
    return undefined;
  }

  /** The event run through the subscription's document, as JSON: once per group. */
  private serialize(first: Delivery, event: BusEvent): string | Promise<string> {
    this.serializations += 1;
    const run = (): ExecutionResult | Promise<ExecutionResult> => {
      try {
        let operations = this.operations.get(first.document);
        if (!operations) {
          operations = new CompiledOperations(this.schema, first.document, {
            events: true,
            runsBeforeCompiling: this.runsBeforeCompiling,
          });
          this.operations.set(first.document, operations);
        }
        return operations.execute(
          first.operationName ?? undefined,
          first.variables ?? undefined,
          first.context,
          event,
        );
      } catch (err) {
        return { errors: [new GraphQLError('execution failed', { originalError: err as Error })] };
      }
    };
    const toJson = (result: ExecutionResult): string => {
      const out: Record<string, unknown> = {};
      if (result.errors?.length) {
        out.errors = result.errors.map((e) =>
          formatError(e, first.context.requestId, first.context.log),
        );
      }
      if ('data' in result) out.data = result.data ?? null;
      return JSON.stringify(out);
    };
    const result = run();
    return result instanceof Promise ? result.then(toJson) : toJson(result);
  }
}

function finish(targets: Array<[Delivery, Verdict]>, json: string): void {
  // Encoded on the first delivery, then the same bytes for every subscriber of the group.
  const result = new EncodedResult(json);
  for (const [d, verdict] of targets) {
    if (verdict === 'deliver' || verdict === 'deliver-end') d.send(result);
    if (verdict === 'end' || verdict === 'deliver-end') d.end();
  }
}
