import type { GraphQLFormattedError } from 'graphql';
import {
  CloseCode,
  DEPRECATED_GRAPHQL_WS_PROTOCOL,
  GRAPHQL_TRANSPORT_WS_PROTOCOL,
  MessageType,
  parseMessage,
} from 'graphql-ws';

export { CloseCode, DEPRECATED_GRAPHQL_WS_PROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL };

export type ProtocolName =
  typeof GRAPHQL_TRANSPORT_WS_PROTOCOL | typeof DEPRECATED_GRAPHQL_WS_PROTOCOL;

/** The subprotocol to speak, from `Sec-WebSocket-Protocol`: the modern one wins; null for none. */
export function chooseProtocol(header: string | string[] | undefined): ProtocolName | null {
  const offered = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((p) => p.trim());
  if (offered.includes(GRAPHQL_TRANSPORT_WS_PROTOCOL)) return GRAPHQL_TRANSPORT_WS_PROTOCOL;
  if (offered.includes(DEPRECATED_GRAPHQL_WS_PROTOCOL)) return DEPRECATED_GRAPHQL_WS_PROTOCOL;
  return null;
}

/** An operation as both protocols carry it. */
export interface OperationPayload {
  query: string;
  variables: Record<string, unknown> | null;
  operationName: string | null;
}

/** What a client frame asks for, whichever protocol carried it. */
export type ClientCommand =
  | { kind: 'init' }
  | { kind: 'ping'; payload: unknown }
  | { kind: 'pong' }
  | { kind: 'subscribe'; id: string; payload: OperationPayload }
  | { kind: 'stop'; id: string }
  | { kind: 'terminate' }
  /** A frame the protocol refuses; `reply` is what the legacy protocol answers instead. */
  | { kind: 'invalid'; reason: string; reply: 'connection_error' | 'error'; id?: string };

/** How one subprotocol reads client frames and writes server messages. */
export interface Codec {
  readonly name: ProtocolName;
  parse(text: string): ClientCommand;
  ack(): string;
  /** `{"id":…,"type":"next|data","payload":` — the start of a result message. */
  resultPrefix(id: string): string;
  complete(id: string): string;
  /** GraphQL's own refusal of a document (syntax, validation). */
  documentErrors(id: string, errors: readonly GraphQLFormattedError[]): string[];
  pong(payload: unknown): string;
}

// graphql-transport-ws (https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md):
// frames are validated with graphql-ws's own parser; anything it refuses closes with 4400.
const transportWs: Codec = {
  name: GRAPHQL_TRANSPORT_WS_PROTOCOL,
  parse(text) {
    let message: ReturnType<typeof parseMessage>;
    try {
      message = parseMessage(text);
    } catch (err) {
      return { kind: 'invalid', reason: (err as Error).message, reply: 'error' };
    }
    switch (message.type) {
      case MessageType.ConnectionInit:
        return { kind: 'init' };
      case MessageType.Ping:
        return { kind: 'ping', payload: message.payload };
      case MessageType.Pong:
        return { kind: 'pong' };
      case MessageType.Subscribe:
        return {
          kind: 'subscribe',
          id: message.id,
          payload: {
            query: message.payload.query,
            variables: (message.payload.variables as Record<string, unknown> | null) ?? null,
            operationName: message.payload.operationName ?? null,
          },
        };
      case MessageType.Complete:
        return { kind: 'stop', id: message.id };
      default:
        return {
          kind: 'invalid',
          reason: `a client does not send "${message.type}"`,
          reply: 'error',
        };
    }
  },
  ack: () => '{"type":"connection_ack"}',
  resultPrefix: (id) => `{"id":${JSON.stringify(id)},"type":"next","payload":`,
  complete: (id) => `{"id":${JSON.stringify(id)},"type":"complete"}`,
  documentErrors: (id, errors) => [JSON.stringify({ id, type: 'error', payload: errors })],
  pong: (payload) => JSON.stringify(payload ? { type: 'pong', payload } : { type: 'pong' }),
};

// graphql-ws, the legacy protocol of Apollo's subscriptions-transport-ws
// (https://github.com/apollographql/subscriptions-transport-ws/blob/master/PROTOCOL.md). As its
// reference server does: an unreadable frame answers `connection_error` and is ignored; every
// error of an operation is a `data` message with `errors`, followed by `complete`.
const legacyWs: Codec = {
  name: DEPRECATED_GRAPHQL_WS_PROTOCOL,
  parse(text) {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return { kind: 'invalid', reason: 'the message is not JSON', reply: 'connection_error' };
    }
    if (!message || typeof message !== 'object' || Array.isArray(message)) {
      return {
        kind: 'invalid',
        reason: 'the message must be a JSON object',
        reply: 'connection_error',
      };
    }
    const m = message as { type?: unknown; id?: unknown; payload?: unknown };
    const id = typeof m.id === 'string' || typeof m.id === 'number' ? String(m.id) : undefined;
    switch (m.type) {
      case 'connection_init':
        return { kind: 'init' };
      case 'connection_terminate':
        return { kind: 'terminate' };
      case 'start': {
        const p = m.payload as Record<string, unknown> | null | undefined;
        if (id === undefined || id === '') {
          return { kind: 'invalid', reason: '"start" needs an "id"', reply: 'error' };
        }
        if (
          !p ||
          typeof p !== 'object' ||
          typeof p.query !== 'string' ||
          (p.variables !== undefined &&
            p.variables !== null &&
            (typeof p.variables !== 'object' || Array.isArray(p.variables))) ||
          (p.operationName !== undefined &&
            p.operationName !== null &&
            typeof p.operationName !== 'string')
        ) {
          return {
            kind: 'invalid',
            reason: '"start" needs a payload with a "query" string, and "variables" as an object',
            reply: 'error',
            id,
          };
        }
        return {
          kind: 'subscribe',
          id,
          payload: {
            query: p.query,
            variables: (p.variables as Record<string, unknown> | null | undefined) ?? null,
            operationName: (p.operationName as string | null | undefined) ?? null,
          },
        };
      }
      case 'stop':
        if (id === undefined)
          return { kind: 'invalid', reason: '"stop" needs an "id"', reply: 'error' };
        return { kind: 'stop', id };
      default:
        return {
          kind: 'invalid',
          reason: `unknown message type ${JSON.stringify(m.type ?? null).slice(0, 60)}`,
          reply: 'error',
          id,
        };
    }
  },
  ack: () => '{"type":"connection_ack"}',
  resultPrefix: (id) => `{"id":${JSON.stringify(id)},"type":"data","payload":`,
  complete: (id) => `{"id":${JSON.stringify(id)},"type":"complete"}`,
  documentErrors: (id, errors) => [
    JSON.stringify({ id, type: 'data', payload: { errors } }),
    JSON.stringify({ id, type: 'complete' }),
  ],
  pong: () => '',
};

export function codecFor(name: ProtocolName): Codec {
  return name === GRAPHQL_TRANSPORT_WS_PROTOCOL ? transportWs : legacyWs;
}

/** The legacy protocol's keep-alive message. */
export const LEGACY_KEEP_ALIVE = '{"type":"ka"}';

/** The legacy protocol's answer to a frame it cannot use. */
export function legacyProtocolError(
  reply: 'connection_error' | 'error',
  message: string,
  id?: string,
): string {
  return JSON.stringify(
    reply === 'connection_error'
      ? { type: 'connection_error', payload: { message } }
      : { type: 'error', ...(id !== undefined ? { id } : {}), payload: { message } },
  );
}
