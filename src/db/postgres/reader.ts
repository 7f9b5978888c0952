import type { Readable } from 'node:stream';

import type pg from 'pg';

import { loadPg, loadPgParser } from './module.js';

import { NamedExecution } from './statements.js';

/** The internals of node-postgres 8's connection the reader replaces (lib/connection.js). */
interface ConnectionInternals {
  _emitMessage: boolean;
  attachListeners(stream: Readable): void;
  emit(event: string, message: unknown): boolean;
}

/** What pg-protocol's parser makes of one whole message (its private `handlePacket`). */
type HandlePacket = (offset: number, code: number, length: number, bytes: Buffer) => Message;

interface Message {
  name: string;
  length: number;
  /** ReadyForQuery's transaction status: I, T or E. */
  status?: string;
}

const EMPTY: Buffer = Buffer.alloc(0);
const DATA_ROW = 0x44; // 'D'
const COMMAND_COMPLETE = 0x43; // 'C'
const BIND_COMPLETE = 0x32; // '2'
const READY_FOR_QUERY = 0x5a; // 'Z'
/** A message's type byte and its length, which counts itself but not the type byte. */
const HEADER = 5;
/** Longer fields are decoded by Node's UTF-8 decoder, faster than a check byte by byte. */
const CHECKED_FIELD_MAX = 128;

/** The class of `readingClient()`'s clients. */
export type ReadingClient = pg.Client;

let readingClientClass: (new (config?: string | pg.ClientConfig) => pg.Client) | null = null;

/**
 * A node-postgres client class whose answers from PostgreSQL are read by `AnswerReader` instead
 * of pg-protocol's parser; the pool makes every client of svc's as one (open.ts). Made on
 * first use, as it extends pg's client and pg is loaded only for PostgreSQL (module.ts).
 */
export function readingClient(): new (config?: string | pg.ClientConfig) => pg.Client {
  return (readingClientClass ??= class ReadingClient extends loadPg().Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      const connection = this.connection as unknown as ConnectionInternals;
      // The connection attaches its reader once its socket is connected (and again to the TLS
      // socket when it upgrades).
      connection.attachListeners = (stream) => {
        const reader = new AnswerReader(connection, this);
        stream.on('data', (chunk: Buffer) => reader.read(chunk));
      };
    }
  });
}

/**
 * Reads one connection's answers, in the part node-postgres's connection plays with pg-protocol's
 * parser: it cuts the bytes into messages and emits each under its name for the client.
 *
 * The rows and command tags answering svc's named statements (`NamedExecution`) go to the
 * execution directly: a row's fields are cut from one decoding of its message, and no message
 * object is made nor event emitted for them. node-postgres decodes each field with a call of its
 * own into C++ (`Buffer#toString`), makes an object per message and emits it through the
 * connection to the client, which hands it to the query: about 35,000 of the 86,000 instructions a
 * send spent reading its answers went to its rows' fields (bench `instructions`, round sixteen).
 * Their BindComplete is dropped (node-postgres's client does not listen for it). ReadyForQuery,
 * which ends every statement, is made here for every query. Every other message, and every
 * message answering a query that is not a named execution, is parsed by pg-protocol's own
 * parser and emitted as node-postgres emits it: authentication, errors, notices, notifications
 * and Kysely's unnamed statements read exactly as before.
 */
export class AnswerReader {
  private buffer: Buffer = EMPTY;
  private offset = 0;
  private length = 0;
  private readonly parse: HandlePacket;

  constructor(
    private readonly connection: ConnectionInternals,
    private readonly client: pg.Client,
  ) {
    const parser = new (loadPgParser())() as unknown as { handlePacket: HandlePacket };
    this.parse = parser.handlePacket.bind(parser);
  }

  /** Reads the messages `chunk` completes; keeps a message's beginning until the rest comes. */
  read(chunk: Buffer): void {
    this.append(chunk);
    const bytes = this.buffer;
    const end = this.offset + this.length;
    let offset = this.offset;
    while (offset + HEADER <= end) {
      const length = bytes.readUInt32BE(offset + 1);
      const next = offset + 1 + length;
      if (next > end) break;
      this.dispatch(bytes[offset]!, bytes, offset + HEADER, next, length);
      offset = next;
    }
    if (offset === end) {
      this.buffer = EMPTY;
      this.offset = 0;
      this.length = 0;
    } else {
      this.offset = offset;
      this.length = end - offset;
    }
  }

  /** Adds `chunk` after the unread bytes (pg-protocol's `mergeBuffer`). */
  private append(chunk: Buffer): void {
    if (this.length === 0) {
      this.buffer = chunk;
      this.offset = 0;
      this.length = chunk.byteLength;
      return;
    }
    const length = this.length + chunk.byteLength;
    if (this.offset + length > this.buffer.byteLength) {
      let target: Buffer;
      if (length <= this.buffer.byteLength && this.offset >= this.length) {
        // The unread bytes move to the front of the buffer they are in.
        target = this.buffer;
      } else {
        let size = this.buffer.byteLength * 2;
        while (length >= size) size *= 2;
        target = Buffer.allocUnsafe(size);
      }
      this.buffer.copy(target, 0, this.offset, this.offset + this.length);
      this.buffer = target;
      this.offset = 0;
    }
    chunk.copy(this.buffer, this.offset + this.length);
    this.length = length;
  }

  /** One whole message: its type byte, and its body from `start` to `end`. */
  private dispatch(code: number, bytes: Buffer, start: number, end: number, length: number): void {
    if (code === READY_FOR_QUERY) {
      this.emit({ name: 'readyForQuery', length, status: String.fromCharCode(bytes[start]!) });
      return;
    }
    const query = (this.client as unknown as { _activeQuery: unknown })._activeQuery;
    if (query instanceof NamedExecution && !this.connection._emitMessage) {
      if (code === DATA_ROW) {
        query.handleFields(this.rowFields(bytes, start, end));
        return;
      }
      // node-postgres's client does not listen for BindComplete.
      if (code === BIND_COMPLETE) return;
      if (code === COMMAND_COMPLETE) {
        // The tag is ASCII and ends with a NUL.
        query.handleCommandComplete({ text: bytes.toString('latin1', start, end - 1) });
        return;
      }
    }
    this.emit(this.parse(start, code, length, bytes));
  }

  /** Emits `message` as node-postgres's connection does (lib/connection.js `attachListeners`). */
  private emit(message: Message): void {
    const connection = this.connection;
    if (connection._emitMessage) connection.emit('message', message);
    connection.emit(message.name === 'error' ? 'errorMessage' : message.name, message);
  }

  /**
   * The texts of a DataRow's fields (null for SQL NULL). A field of ASCII bytes is cut from one
   * Latin-1 decoding of the whole message (the same characters for those bytes), made once for
   * the row; one with other bytes, or a long one, is decoded as UTF-8 on its own.
   */
  private rowFields(bytes: Buffer, start: number, end: number): Array<string | null> {
    const count = (bytes[start]! << 8) | bytes[start + 1]!;
    // A new array for each row: storing the texts into one kept from earlier rows would cost a
    // write barrier each (an old object pointing at new ones).
    const fields = new Array<string | null>(count);
    let whole: string | undefined;
    let p = start + 2;
    for (let i = 0; i < count; i += 1) {
      const size = (bytes[p]! << 24) | (bytes[p + 1]! << 16) | (bytes[p + 2]! << 8) | bytes[p + 3]!;
      p += 4;
      if (size < 0) {
        fields[i] = null;
        continue;
      }
      const stop = p + size;
      if (size <= CHECKED_FIELD_MAX && isAscii(bytes, p, stop)) {
        whole ??= bytes.toString('latin1', start, end);
        fields[i] = whole.slice(p - start, stop - start);
      } else {
        fields[i] = bytes.toString('utf8', p, stop);
      }
      p = stop;
    }
    return fields;
  }
}

function isAscii(bytes: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) {
    if (bytes[i]! > 0x7f) return false;
  }
  return true;
}
