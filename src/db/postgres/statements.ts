import type pg from 'pg';

import { copiesAsLiteral, objectMaker } from '../statements/columns.js';
import { executionMessages } from './bind.js';

type Parser = (value: string) => unknown;
type Make = (values: unknown[]) => Record<string, unknown>;

/** The type parser node-postgres would use for a column (the pool's `types`). */
export type TypeParsers = (oid: number, format: 'text' | 'binary') => Parser;

/** What a named statement's answers look like on one connection: its columns, parsed and named. */
interface RowShape {
  parsers: Parser[];
  make: Make;
}

/** A named statement's answer, as Kysely's PostgreSQL driver reads node-postgres's result. */
export interface Executed {
  command: string | null;
  rowCount: number | null;
  rows: Array<Record<string, unknown>>;
}

/** The internals of node-postgres 8's connection a query takes part in (lib/connection.js). */
interface Connection {
  stream: { cork?: () => void; uncork?: () => void };
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(config: { text: string; name: string; types: unknown }): void;
  /** Writes `buffer` to the server unless the socket is closed. */
  _send(buffer: Buffer): boolean;
  execute(config: { portal: string; rows: undefined }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

/** What node-postgres reads from a CommandComplete's tag (lib/result.js). */
const COMMAND_TAG = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/;

/** A statement without rows (NoData where a row description would be). */
const NO_ROWS: RowShape = { parsers: [], make: () => ({}) };

/**
 * The named statements (the hot ones: ../statements/prepared.ts) of one connection, run by a query object of
 * their own instead of node-postgres's `Query`, which the connection runs the same way (it calls
 * `submit`, then a `handle…` method per message of the answer).
 *
 * - node-postgres's `Query` copies its configuration property by property with descriptors, and
 *   is an event emitter with a result object of its own: about 39,000 instructions to make one,
 *   two per send (bench `instructions`, round fourteen).
 * - It asks for the row description at every execution (Describe), and parses it and builds the
 *   parsers anew each time (about 50,000 instructions of a send, round thirteen). A statement's
 *   row type cannot change on a connection while its plan is kept (PostgreSQL refuses with
 *   "cached plan must not change result type"), so the shape learned at the first execution on a
 *   connection is kept for that connection, and the later executions send Bind, Execute and Sync
 *   only.
 * - Its rows are made objects by copying an empty template and storing each column by its name,
 *   a keyed store the engine cannot specialize across statements. Here each statement's rows
 *   are made by one object literal compiled from its columns (../statements/columns.ts `objectMaker`), as
 *   SQLite's are (../sqlite/rows.ts). A named statement never selects `*`, so its columns are fixed;
 *   a list a literal cannot copy as it is (a name twice, `__proto__`) is copied a column at a
 *   time, the last of a name winning, as node-postgres does.
 */
export class ConnectionStatements {
  private readonly shapes = new Map<string, RowShape>();

  constructor(private readonly types: TypeParsers) {}

  /** Runs the statement `text` under `name` on `client`: its answer, or the error it got. */
  run(client: pg.ClientBase, name: string, text: string, values: unknown[]): Promise<Executed> {
    return new Promise((resolve, reject) => {
      const execution = new NamedExecution(name, text, values, this);
      execution.callback = (err, result) => (err ? reject(err) : resolve(result!));
      client.query(execution as unknown as pg.QueryConfig);
    });
  }

  /** The shape of `name`'s rows on this connection, when an execution here has described it. */
  shapeOf(name: string): RowShape | undefined {
    return this.shapes.get(name);
  }

  /** Keeps the shape of `name`'s rows from its description (`fields` empty: no rows). */
  learn(
    name: string,
    fields: ReadonlyArray<{ name: string; dataTypeID: number; format?: string }>,
  ) {
    const shape =
      fields.length === 0
        ? NO_ROWS
        : {
            parsers: fields.map((f) =>
              this.types(f.dataTypeID, f.format === 'binary' ? 'binary' : 'text'),
            ),
            make: rowMaker(fields.map((f) => f.name)),
          };
    this.shapes.set(name, shape);
    return shape;
  }
}

/**
 * One execution of a named statement, in the part node-postgres's `Query` plays (lib/query.js):
 * the client calls `submit` when the connection is free, then one `handle…` method per message,
 * and `handleReadyForQuery` or `handleError` to end it.
 */
export class NamedExecution {
  callback: ((err: Error | null, result?: Executed) => void) | undefined = undefined;
  private shape: RowShape | undefined = undefined;
  /** This execution asked for the description. */
  private describing = false;
  private readonly rows: Array<Record<string, unknown>> = [];
  private readonly values: unknown[] = [];
  private command: string | null = null;
  private rowCount: number | null = null;
  /** A row that could not be parsed: the execution fails with it once the answer has ended. */
  private failure: Error | null = null;
  private ended = false;

  constructor(
    readonly name: string,
    readonly text: string,
    private readonly parameters: unknown[],
    private readonly statements: ConnectionStatements,
  ) {}

  /** Sends the execution (node-postgres's `submit` and `prepare`); an error refuses it unsent. */
  submit(connection: Connection): Error | null {
    const previous =
      connection.parsedStatements[this.name] ?? connection.submittedNamedStatements[this.name];
    if (previous !== undefined && previous !== this.text) {
      return new Error(
        `Prepared statements must be unique - '${this.name}' was used for a different statement`,
      );
    }
    this.send(connection, previous !== undefined);
    return null;
  }

  private send(connection: Connection, parsed: boolean): void {
    this.shape = parsed ? this.statements.shapeOf(this.name) : undefined;
    this.describing = !this.shape;
    let messages: Buffer;
    try {
      messages = executionMessages(this.name, this.parameters, this.describing);
    } catch (err) {
      // A parameter could not be made text. When a Parse goes first, it is sent and a Sync ends
      // the execution (its ReadyForQuery frees the connection), so the statement is there for the
      // next execution. node-postgres closes the statement here while its connection goes on
      // counting it as parsed, so every later execution of it there would fail ("prepared
      // statement does not exist").
      if (!parsed) this.parse(connection);
      connection.sync();
      this.handleError(err as Error);
      return;
    }
    if (parsed) {
      connection._send(messages);
      return;
    }
    // One write for both (node-postgres corks its messages the same way).
    connection.stream.cork?.();
    try {
      this.parse(connection);
      connection._send(messages);
    } finally {
      connection.stream.uncork?.();
    }
  }

  private parse(connection: Connection): void {
    connection.parse({ text: this.text, name: this.name, types: undefined });
    connection.submittedNamedStatements[this.name] = this.text;
  }

  handleRowDescription(msg: {
    fields: ReadonlyArray<{ name: string; dataTypeID: number; format?: string }>;
  }): void {
    this.shape = this.statements.learn(this.name, msg.fields);
  }

  handleDataRow(msg: { fields: Array<string | null> }): void {
    this.handleFields(msg.fields);
  }

  /** A row's field texts (reader.ts hands them here directly); `raw` is not kept. */
  handleFields(raw: ReadonlyArray<string | null>): void {
    if (this.failure) return;
    const shape = this.shape;
    if (!shape) {
      this.failure = new Error(`a row of ${this.name} came before its description`);
      return;
    }
    const values = this.values;
    try {
      for (let i = 0; i < raw.length; i += 1) {
        const value = raw[i]!;
        values[i] = value === null ? null : shape.parsers[i]!(value);
      }
    } catch (err) {
      this.failure = err as Error;
      return;
    }
    this.rows.push(shape.make(values));
  }

  handleCommandComplete(msg: { text: string }): void {
    // Described and answered without a description (NoData): a statement without rows.
    if (this.describing && !this.shape) this.shape = this.statements.learn(this.name, []);
    const tag = COMMAND_TAG.exec(msg.text);
    if (!tag) return;
    this.command = tag[1]!;
    const count = tag[3] ?? tag[2];
    if (count !== undefined) this.rowCount = Number.parseInt(count, 10);
  }

  handleEmptyQuery(): void {}

  /** Not reached: an execution asks for every row at once (no row limit). */
  handlePortalSuspended(connection: Connection): void {
    connection.execute({ portal: '', rows: undefined });
    connection.sync();
  }

  handleCopyInResponse(connection: Connection): void {
    connection.sendCopyFail('No source stream defined');
  }

  handleCopyData(): void {}

  handleError(err: Error): void {
    const failure = this.failure ?? err;
    this.failure = null;
    this.end(failure);
  }

  handleReadyForQuery(): void {
    if (this.failure) {
      this.handleError(this.failure);
      return;
    }
    this.end(null);
  }

  /** Tells the caller once: after a Bind that could not be sent, the Sync's answer comes too. */
  private end(err: Error | null): void {
    if (this.ended) return;
    this.ended = true;
    if (err) this.callback?.(err);
    else this.callback?.(null, { command: this.command, rowCount: this.rowCount, rows: this.rows });
  }
}

/** Makes a row object from its parsed values, in column order. */
function rowMaker(names: string[]): Make {
  if (copiesAsLiteral(names)) {
    return objectMaker<Record<string, unknown>>(names.map((name, i) => [name, i] as const));
  }
  // Own data properties, as node-postgres makes them: an assignment to `__proto__` would set the
  // object's prototype instead (to the column's value, when it is an object).
  return (values) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i += 1) {
      Object.defineProperty(out, names[i]!, {
        value: values[i],
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    return out;
  };
}
