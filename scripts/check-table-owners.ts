import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import {
  OWNER_FILES,
  PENDING_MOVES,
  RULE_OWNERS,
  TABLE_OWNERS,
  WHOLE_DATABASE_WRITERS,
  type RuleName,
  type TableName,
} from '../src/db/table-owners.js';

// The owner check: a write to a table (Kysely's insertInto/updateTable/deleteFrom, or a `sql`
// template's insert into/update/delete from) only in the owning area's queries.ts or a file the
// owner map lists; a test of a rule's facts (a role by name, a privacy flag) only in the rule's
// owner; a row type never in an edge (graphql/, http/, ws/). Run by `npm run lint`;
// `tsx scripts/check-table-owners.ts` alone.

export interface Source {
  /** Path under src/, with forward slashes. */
  path: string;
  text: string;
}

export interface ForeignWrite {
  path: string;
  line: number;
  table: TableName;
  owner: string;
}

const BUILDER_WRITE =
  /\b(?:insertInto|updateTable|deleteFrom)\(\s*['"`]([a-z_]+)(?:\s+as\s+\w+)?['"`]/g;
const SQL_TEMPLATE = /\bsql(?:<[^`]*?>)?`([^`]*)`/g;
const SQL_WRITE = /\b(?:insert\s+into|update|delete\s+from)\s+"?([a-z_]+)"?/gi;

/** A write to a table named at run time: `delete from ${...}`, `copy ${...} ... from stdin`. */
const DYNAMIC_WRITE = /`[^`]*\b(?:insert\s+into|delete\s+from|update|truncate|copy)\s+\$\{[^`]*`/gi;

const isTable = (name: string): name is TableName => Object.hasOwn(TABLE_OWNERS, name);

const ROLE_NAME = `['"](?:owner|moderator|member|guest)['"]`;
const EQUALITY = '\\s*[!=]==?\\s*';
/** How each rule's facts are tested outside its owner. */
const RULE_TESTS: Record<RuleName, RegExp> = {
  // `role === 'guest'`, `m.role !== 'owner'`, `actorRole === 'member'`, and the same reversed.
  role: new RegExp(
    `\\b\\w*[rR]ole\\b${EQUALITY}${ROLE_NAME}|${ROLE_NAME}${EQUALITY}[\\w.?]*\\b\\w*[rR]ole\\b`,
    'g',
  ),
  // `c.isPrivate === 1`, `isPrivate !== 0`, and the same reversed.
  privacy: new RegExp(
    `\\bisPrivate\\b${EQUALITY}[01]\\b|\\b[01]${EQUALITY}[\\w.?]*\\bisPrivate\\b`,
    'g',
  ),
};

const RULE_ADVICE: Record<RuleName, string> = {
  role: 'tests a workspace role by name; ask auth/policy.ts (can, isGuest, atLeast) or Authz',
  privacy:
    "tests a conversation's privacy flag; ask conversations/access.ts (readStanding, canRead)",
};

/** May `file` write `table`? */
export function mayWrite(file: string, table: TableName): boolean {
  const owner = TABLE_OWNERS[table];
  return file === `${owner}/queries.ts` || (OWNER_FILES[owner] ?? []).includes(file);
}

/** Every write in `sources` outside its table's owner (migrations and tests are not checked). */
export function foreignWrites(sources: readonly Source[]): ForeignWrite[] {
  const found: ForeignWrite[] = [];
  for (const { path: file, text } of sources) {
    if (file.startsWith('db/migrations/') || file.endsWith('.test.ts')) continue;
    const lineOf = (index: number) => text.slice(0, index).split('\n').length;
    const report = (table: string, index: number) => {
      if (isTable(table) && !mayWrite(file, table)) {
        found.push({ path: file, line: lineOf(index), table, owner: TABLE_OWNERS[table] });
      }
    };
    for (const m of text.matchAll(BUILDER_WRITE)) report(m[1]!, m.index);
    for (const t of text.matchAll(SQL_TEMPLATE)) {
      for (const w of t[1]!.matchAll(SQL_WRITE)) report(w[1]!.toLowerCase(), t.index + w.index);
    }
  }
  return found;
}

/** Writes to tables named at run time outside WHOLE_DATABASE_WRITERS: `file:line` each. */
export function dynamicWrites(
  sources: readonly Source[],
  allowed: readonly string[] = WHOLE_DATABASE_WRITERS,
): string[] {
  const found: string[] = [];
  for (const { path: file, text } of sources) {
    if (file.startsWith('db/migrations/') || file.endsWith('.test.ts') || allowed.includes(file))
      continue;
    for (const m of text.matchAll(DYNAMIC_WRITE)) {
      // `copy ... to stdout` reads.
      if (/^`?copy\b/i.test(m[0].replace(/^`/, '')) && /\bto\s+stdout/i.test(m[0])) continue;
      found.push(`${file}:${text.slice(0, m.index).split('\n').length}`);
    }
  }
  return found;
}

export interface RuleCopy {
  path: string;
  line: number;
  rule: RuleName;
}

/** May `file` test the facts of `rule` itself? */
export function mayTest(file: string, rule: RuleName): boolean {
  return RULE_OWNERS[rule].some((owner) =>
    owner.endsWith('/') ? file.startsWith(owner) : file === owner,
  );
}

/** Every test of a rule's facts in `sources` outside the rule's owner (tests are not checked). */
export function ruleCopies(sources: readonly Source[]): RuleCopy[] {
  const found: RuleCopy[] = [];
  for (const { path: file, text } of sources) {
    if (file.startsWith('db/migrations/') || file.endsWith('.test.ts')) continue;
    for (const rule of Object.keys(RULE_TESTS) as RuleName[]) {
      if (mayTest(file, rule)) continue;
      for (const m of text.matchAll(RULE_TESTS[rule])) {
        found.push({ path: file, line: text.slice(0, m.index).split('\n').length, rule });
      }
    }
  }
  return found;
}

export interface MisplacedRowType {
  table: TableName;
  rowType: string;
  /** The file under src/db/tables/ that holds it, without `.ts`. */
  file: string;
  /** The file named for its owner: the owner's last folder (`services/dm` -> `dm`). */
  expected: string;
}

/**
 * Row types filed away from their owner: each table's row type lives in
 * `db/tables/<owner's folder>.ts`, so a file holds the tables of one area. Read from the
 * `Database` interface and the imports of `db/schema.ts`.
 */
export function misplacedRowTypes(sources: readonly Source[]): MisplacedRowType[] {
  const schema = sources.find((s) => s.path === 'db/schema.ts')?.text ?? '';
  const fileOf = new Map<string, string>();
  for (const m of schema.matchAll(/import type \{([^}]*)\} from '\.\/tables\/([\w-]+)\.js'/g)) {
    for (const name of m[1]!.split(',')) if (name.trim()) fileOf.set(name.trim(), m[2]!);
  }
  const body = /export interface Database \{([^}]*)\}/.exec(schema)?.[1] ?? '';
  const out: MisplacedRowType[] = [];
  for (const m of body.matchAll(/^\s*(\w+): (\w+);/gm)) {
    const table = m[1] as TableName;
    const rowType = m[2]!;
    const expected = TABLE_OWNERS[table]?.split('/').at(-1);
    const file = fileOf.get(rowType);
    if (expected && file !== expected) out.push({ table, rowType, file: file ?? '?', expected });
  }
  return out;
}

export interface EdgeRowType {
  path: string;
  line: number;
  /** The module imported, as written. */
  from: string;
}

/** The edges: they name the services' views, never a table's row type. */
const EDGES = ['graphql/', 'http/', 'ws/'];
/** An import or re-export from db/tables/ or db/schema.ts (where the row types are). */
const ROW_TYPE_IMPORT = /\bfrom\s+['"]((?:\.\.?\/)+db\/(?:tables\/[\w-]+|schema)\.js)['"]/g;

/**
 * Every import of a row type in an edge file (`graphql/`, `http/`, `ws/`): an edge asks a
 * service, which answers a view. The lint zones say the same of `db/` as a whole for `graphql/`
 * and `ws/`; `http/` may use the rest of `db/` (the readiness probe reads pending migrations).
 */
export function edgeRowTypes(sources: readonly Source[]): EdgeRowType[] {
  const found: EdgeRowType[] = [];
  for (const { path: file, text } of sources) {
    if (!EDGES.some((edge) => file.startsWith(edge)) || file.endsWith('.test.ts')) continue;
    for (const m of text.matchAll(ROW_TYPE_IMPORT)) {
      found.push({ path: file, line: text.slice(0, m.index).split('\n').length, from: m[1]! });
    }
  }
  return found;
}

/**
 * The problems to print: foreign writes not pending a move, pending moves already done, writes
 * to tables named at run time outside the whole-database writers, rules tested outside their
 * owner, row types filed away from their owner, and row types named by an edge.
 */
export function checkTableOwners(
  sources: readonly Source[],
  pending: readonly string[] = PENDING_MOVES,
): string[] {
  const writes = foreignWrites(sources);
  const seen = new Set(writes.map((w) => `${w.path} ${w.table}`));
  const problems = writes
    .filter((w) => !pending.includes(`${w.path} ${w.table}`))
    .map(
      (w) =>
        `src/${w.path}:${w.line}: writes ${w.table}, which ${w.owner} owns; call an exported function of src/${w.owner}/queries.ts`,
    );
  for (const p of pending) {
    if (!seen.has(p)) problems.push(`"${p}" is no longer written; remove it from PENDING_MOVES`);
  }
  for (const at of dynamicWrites(sources)) {
    problems.push(
      `src/${at}: writes a table named at run time; only WHOLE_DATABASE_WRITERS (src/db/table-owners.ts) may`,
    );
  }
  for (const c of ruleCopies(sources)) {
    problems.push(`src/${c.path}:${c.line}: ${RULE_ADVICE[c.rule]}`);
  }
  for (const r of misplacedRowTypes(sources)) {
    problems.push(
      `src/db/tables/${r.file}.ts holds ${r.rowType}, the row type of ${r.table}, which ${TABLE_OWNERS[r.table]} owns; move it to src/db/tables/${r.expected}.ts`,
    );
  }
  for (const e of edgeRowTypes(sources)) {
    problems.push(
      `src/${e.path}:${e.line}: imports ${e.from}, a table's row type; an edge takes a view from the owning service (docs/architecture.md, "The lint zones")`,
    );
  }
  return problems;
}

/** The .ts files under `root` (src/), paths relative to it. */
export function readSources(root: string): Source[] {
  const out: Source[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) {
        out.push({
          path: path.relative(root, full).split(path.sep).join('/'),
          text: fs.readFileSync(full, 'utf8'),
        });
      }
    }
  };
  walk(root);
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');
  const problems = checkTableOwners(readSources(src));
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(
      `owner check: ${problems.length} problem(s) (docs/architecture.md, "Who owns what")`,
    );
    process.exitCode = 1;
  }
}
