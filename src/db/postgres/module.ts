import { createRequire } from 'node:module';

import type Pg from 'pg';

// node-postgres is loaded when a PostgreSQL database is opened, not when this folder is imported:
// a process on SQLite (the default, and most `svc` commands) never pays for it. Loading it costs
// a tenth of a second or more, most of it Node's own fetch implementation, which pg's stream
// set-up pulls in (docs/cli.md, "Start-up").
const require = createRequire(import.meta.url);

let pg: typeof Pg | null = null;

/** The `pg` module, loaded on first use. */
export function loadPg(): typeof Pg {
  return (pg ??= require('pg') as typeof Pg);
}

/** pg-protocol's message parser (a CommonJS module of pg's), loaded on first use. */
export function loadPgParser(): new () => unknown {
  return (require('pg-protocol/dist/parser.js') as { Parser: new () => unknown }).Parser;
}
