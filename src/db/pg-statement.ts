import pg from 'pg';

/** What a named statement's answers look like on one connection: its columns and their parsers. */
export interface RowShape {
  fields: pg.FieldDef[];
  parsers: Array<(value: string) => unknown>;
}

/** The internals of node-postgres 8's `Query` this subclass takes part in (lib/query.js). */
interface QueryInternals {
  name: string;
  text: string;
  values: unknown[];
  portal: string;
  binary: boolean;
  rows: number | undefined;
  types: unknown;
  _accumulateRows: boolean;
  _result: { fields: pg.FieldDef[]; _parsers: Array<(value: string) => unknown> | undefined };
  hasBeenParsed(connection: Connection): boolean;
  handleError(err: unknown, connection: Connection): void;
  _getRows(connection: Connection, rows: number | undefined): void;
}

interface Connection {
  parse(config: { text: string; name: string; types: unknown }): void;
  describe(config: { type: 'P'; name: string }): void;
  submittedNamedStatements: Record<string, string>;
  bind(config: {
    portal: string;
    statement: string;
    values: unknown[];
    binary: boolean;
    valueMapper: (value: unknown) => unknown;
  }): void;
  sync(): void;
}

/** How node-postgres turns a parameter into its text (lib/utils.js, on the module as `utils`). */
const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } })
  .utils;

const BaseQuery = pg.Query as unknown as new (config: pg.QueryConfig) => pg.Query & {
  handleRowDescription(msg: { fields: pg.FieldDef[] }): void;
  handleCommandComplete(msg: unknown, connection: Connection): void;
};

/**
 * A named statement run on a connection that has already described its rows: node-postgres asks
 * for the row description at every execution (Describe), and parses it and builds the result's
 * parsers anew each time (bench `instructions`: about 50,000 instructions of a send, more of a
 * `me` with its many columns). A statement's row type cannot change on a connection while its
 * plan is kept (PostgreSQL refuses with "cached plan must not change result type"), so the shape
 * learned at the first execution on a connection is kept for that connection (`shapes`), and the
 * later executions send Bind, Execute and Sync only. The first execution on a connection asks for
 * the description, as node-postgres always does.
 */
export class DescribedQuery extends BaseQuery {
  /** This execution asked for the description (node-postgres's own path). */
  private described = false;

  constructor(
    config: pg.QueryConfig & { name: string; rowMode: 'array' },
    private readonly shapes: Map<string, RowShape>,
  ) {
    super(config);
  }

  /**
   * node-postgres's `prepare` (lib/query.js), with Describe sent only while the shape is unknown
   * on this connection, and a parameter that cannot be sent handled without closing the
   * statement (see below).
   */
  prepare(connection: Connection): void {
    const self = this as unknown as QueryInternals;
    const parsed = self.hasBeenParsed(connection);
    if (!parsed) {
      connection.parse({ text: self.text, name: self.name, types: self.types });
      connection.submittedNamedStatements[self.name] = self.text;
    }
    try {
      connection.bind({
        portal: self.portal,
        statement: self.name,
        values: self.values,
        binary: self.binary,
        valueMapper: prepareValue,
      });
    } catch (err) {
      // The Bind was not sent: a Sync ends the query (its ReadyForQuery frees the connection),
      // and a Parse sent just before still completes, so the statement is there for the next
      // execution. node-postgres closes the statement here while its connection goes on
      // counting it as parsed, so every later execution of it there would fail ("prepared
      // statement does not exist").
      connection.sync();
      self.handleError(err, connection);
      return;
    }
    const shape = parsed ? this.shapes.get(self.name) : undefined;
    if (shape) {
      // What handleRowDescription would have set from the description.
      self._result.fields = shape.fields;
      self._result._parsers = shape.parsers;
      self._accumulateRows = true;
    } else {
      this.described = true;
      connection.describe({ type: 'P', name: self.portal });
    }
    self._getRows(connection, self.rows);
  }

  override handleRowDescription(msg: { fields: pg.FieldDef[] }): void {
    super.handleRowDescription(msg);
    const self = this as unknown as QueryInternals;
    this.shapes.set(self.name, { fields: msg.fields, parsers: self._result._parsers ?? [] });
  }

  override handleCommandComplete(msg: unknown, connection: Connection): void {
    super.handleCommandComplete(msg, connection);
    const self = this as unknown as QueryInternals;
    // Described and answered without a description (NoData): a statement without rows.
    if (this.described && !this.shapes.has(self.name)) {
      this.shapes.set(self.name, { fields: [], parsers: [] });
    }
  }
}

/** Runs `query` on `client`: its result, or the error node-postgres gives it. */
export function runDescribed(
  client: pg.PoolClient,
  query: DescribedQuery,
): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    (query as unknown as { callback: (err: Error | null, res: pg.QueryResult) => void }).callback =
      (err, res) => (err ? reject(err) : resolve(res));
    client.query(query);
  });
}
