import fs from 'node:fs';

import { buildSchema, type GraphQLArgument, type GraphQLSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildHttpApp } from '../../src/http/app.js';
import {
  rootType,
  walkDocument,
  type OperationKind,
  type WalkDocument,
} from '../_util/sdl-walk.js';

import { buildMatrixWorld, CALLERS, type Caller, type MatrixWorld } from './_callers.js';
import { ARGS, argument, REQUESTS, type Vars } from './authz-arguments.js';
import {
  MUTATIONS,
  QUERIES,
  ROUTES,
  SECRET_TEXTS,
  SUBSCRIPTIONS,
  type Row,
} from './authz-table.js';

// Issue 48, item 1: who may do what, over the whole served schema and every route, checked
// against one reviewed table (authz-table.ts). Each GraphQL root is called by every kind of
// caller with a document that selects every field of its answer (generated from /api/sdl), so
// a field that leaks is seen, and so is a new root without a row.

const REFUSALS = ['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND'];
const ROUTE_REFUSALS = [401, 403, 404];

type Failure = string;

/** SVC_MATRIX_DUMP=<file>: every answer's code per row and caller, for reading the table against. */
const dump: string[] = [];
const noteAnswer = (row: string, caller: string, code: string | null) =>
  dump.push(`${row}\t${caller}\t${code ?? 'ok'}`);

describe('the authorization matrix', () => {
  let w: MatrixWorld;
  let schema: GraphQLSchema;
  let served: string[];

  beforeAll(async () => {
    w = await buildMatrixWorld();
    schema = buildSchema((await w.t.inject({ method: 'GET', url: '/api/sdl' })).body);
    // The routes as the app registers them: a second app on the same context, told of each.
    const routes = new Set<string>();
    const listing = await buildHttpApp(w.t.ctx, {
      onRoute: (r) => {
        for (const m of [r.method].flat()) if (m !== 'HEAD') routes.add(`${m} ${r.url}`);
      },
    });
    await listing.ready();
    await listing.close();
    served = [...routes];
  }, 240_000);
  afterAll(async () => {
    if (process.env.SVC_MATRIX_DUMP) fs.writeFileSync(process.env.SVC_MATRIX_DUMP, dump.join('\n'));
    await w?.close();
  });

  const rowsOf = (table: Record<string, Row>) =>
    Object.entries(table).map(([key, row]) => ({ key, root: key.split('@')[0]!, row }));

  it('has a row for every root and route the server serves, and none for anything else', () => {
    for (const [operation, table] of [
      ['query', QUERIES],
      ['mutation', MUTATIONS],
      ['subscription', SUBSCRIPTIONS],
    ] as const) {
      const roots = Object.keys(rootType(schema, operation).getFields());
      const rows = new Set(rowsOf(table).map((r) => r.root));
      expect(
        roots.filter((r) => !rows.has(r)),
        `${operation} roots without a row`,
      ).toEqual([]);
      expect(
        [...rows].filter((r) => !roots.includes(r)),
        `${operation} rows of no root`,
      ).toEqual([]);
    }
    expect(
      served.filter((r) => !(r in ROUTES)),
      'routes without a row',
    ).toEqual([]);
    expect(
      Object.keys(ROUTES).filter((r) => !served.includes(r)),
      'rows of no route',
    ).toEqual([]);
  });

  /** The document of a row, and each caller's variables. */
  async function prepare(
    operation: OperationKind,
    key: string,
    root: string,
    callers: readonly Caller[],
  ): Promise<{ doc: WalkDocument; vars: Map<Caller, Vars> }> {
    const vars = new Map<Caller, Vars>();
    for (const c of callers) vars.set(c, (await ARGS[key]?.(w, c)) ?? {});
    const first = vars.get(callers[0]!)!;
    const source = (owner: string, field: string, arg: GraphQLArgument) => {
      if (owner === 'Workspace' && field === 'member') return w.people.member.id;
      if (owner !== rootType(schema, operation).name) return undefined;
      return arg.name in first ? first[arg.name] : argument(w, root, arg.name);
    };
    const doc = walkDocument(schema, root, source, operation);
    for (const c of callers) {
      const own = vars.get(c)!;
      const variables = { ...doc.variables };
      for (const [arg, name] of Object.entries(doc.rootVariables)) {
        if (arg in own) variables[name] = own[arg];
      }
      vars.set(c, variables);
    }
    return { doc, vars };
  }

  /** What a GraphQL answer says about the root: answered, refused (with the code), or failed. */
  function judge(
    root: string,
    res: { status: number; body: any },
    refusedAs: readonly string[] = [],
  ): { refused: boolean; code: string | null; problem: string | null } {
    if (res.status !== 200) return { refused: false, code: null, problem: `HTTP ${res.status}` };
    const errors = (res.body.errors ?? []) as Array<{
      path?: unknown[];
      extensions?: any;
      message: string;
    }>;
    const own = errors.find((e) => !e.path || e.path[0] === root) ?? null;
    // The CSRF refusal is the one error the contract gives no code; nothing ran.
    if (own && !own.path && own.message === 'csrf validation failed' && !res.body.data) {
      return { refused: true, code: 'CSRF', problem: null };
    }
    const bad = errors.find((e) => !e.extensions?.code || e.extensions.code === 'INTERNAL');
    if (bad)
      return {
        refused: false,
        code: null,
        problem: `${bad.extensions?.code ?? 'no code'}: ${bad.message}`,
      };
    const code = (own?.extensions?.code as string | undefined) ?? null;
    const refused =
      code !== null &&
      [...REFUSALS, ...refusedAs].includes(code) &&
      (res.body.data?.[root] ?? null) === null;
    return { refused, code, problem: null };
  }

  /** Secrets and private fields in an answer to `caller` that it may not see. */
  function leaks(caller: Caller, data: unknown): string[] {
    const found: string[] = [];
    const text = JSON.stringify(data ?? null);
    for (const s of SECRET_TEXTS) {
      if (!s.readers.includes(caller) && text.includes(s.text)) found.push(`text "${s.text}"`);
    }
    const self = w.idOf[caller];
    const visit = (v: unknown) => {
      if (Array.isArray(v)) return v.forEach(visit);
      if (!v || typeof v !== 'object') return;
      const o = v as Record<string, unknown>;
      if (o.__typename === 'User' && o.id !== self) {
        for (const f of ['email', 'deletionScheduledFor', 'probationEndsAt']) {
          if (o[f] !== null && o[f] !== undefined) found.push(`User.${f} of another`);
        }
        if (o.instanceOperator === true) found.push('User.instanceOperator of another');
      }
      if (o.__typename === 'Message' && (o.editHistory ?? null) !== null) {
        if (!['moderator', 'owner'].includes(caller)) found.push('Message.editHistory');
      }
      if (o.__typename === 'AbuseReport' && (o.reporterId ?? null) !== null) {
        if (caller !== 'operator' && o.reporterId !== self) found.push('AbuseReport.reporterId');
      }
      Object.values(o).forEach(visit);
    };
    visit(data);
    return found;
  }

  async function runGraphqlRows(
    operation: 'query' | 'mutation',
    table: Record<string, Row>,
  ): Promise<Failure[]> {
    const failures: Failure[] = [];
    for (const { key, root, row } of rowsOf(table)) {
      const runs: Array<{ caller: Caller; agent: boolean }> = CALLERS.map((caller) => ({
        caller,
        agent: false,
      }));
      // An agent acting for a person runs commands as that person with the AGENT initiator: it
      // may never do what the person may not.
      if (root === 'executeCommand' || root === 'executeMacro') {
        for (const caller of CALLERS) runs.push({ caller, agent: true });
      }
      const { doc, vars } = await prepare(operation, key, root, CALLERS);
      const call = async ({ caller, agent }: { caller: Caller; agent: boolean }) => {
        let variables = vars.get(caller)!;
        if (agent) {
          const name = doc.rootVariables.input!;
          variables = {
            ...variables,
            [name]: { ...(variables[name] as Vars), initiator: 'AGENT' },
          };
        }
        return { caller, agent, res: await w.graphql(caller, doc.query, variables) };
      };
      const refusedFirst = [...runs].sort(
        (a, b) => Number(row.may.includes(a.caller)) - Number(row.may.includes(b.caller)),
      );
      const answers: Array<Awaited<ReturnType<typeof call>>> = [];
      const refused = refusedFirst.filter((r) => !row.may.includes(r.caller));
      answers.push(...(await Promise.all(refused.map(call))));
      // Allowed callers of a mutation one after another (each may change what the next finds);
      // queries side by side.
      const allowed = refusedFirst.filter((r) => row.may.includes(r.caller));
      if (operation === 'query') answers.push(...(await Promise.all(allowed.map(call))));
      else for (const r of allowed) answers.push(await call(r));

      let someoneSucceeded = false;
      for (const { caller, agent, res } of answers) {
        const label = `${key} as ${agent ? 'an agent for ' : ''}${caller}`;
        const verdict = judge(root, res, row.refusedAs);
        noteAnswer(key, `${agent ? 'agent:' : ''}${caller}`, verdict.problem ?? verdict.code);
        if (verdict.problem) {
          failures.push(`${label}: ${verdict.problem}`);
          continue;
        }
        const may = row.may.includes(caller);
        if (!may && !verdict.refused) {
          failures.push(
            `${label}: the table refuses it, the server answered ${verdict.code ?? 'without an error'}`,
          );
        }
        if (
          may &&
          verdict.refused &&
          !(verdict.code === 'NOT_FOUND' && someoneSucceeded && row.usesUp)
        ) {
          failures.push(`${label}: the table allows it, the server refused with ${verdict.code}`);
        }
        if (may && !verdict.code) someoneSucceeded = true;
        for (const leak of leaks(caller, res.body.data)) failures.push(`${label}: leaks ${leak}`);
      }
    }
    return failures;
  }

  it('answers every query root as the table says, and leaks nothing', async () => {
    expect(await runGraphqlRows('query', QUERIES)).toEqual([]);
  }, 120_000);

  it('accepts every subscription as the table says', async () => {
    const failures: Failure[] = [];
    for (const { key, root, row } of rowsOf(SUBSCRIPTIONS)) {
      // The remote person's events reach them through their relay's relayStream, not here.
      const callers = CALLERS.filter((c) => c !== 'remote');
      const { doc, vars } = await prepare('subscription', key, root, callers);
      const answers = await Promise.all(
        callers.map(async (c) => ({ c, r: await w.subscribe(c, doc.query, vars.get(c)!) })),
      );
      for (const { c, r } of answers) {
        const code = (r.errors?.[0]?.extensions?.code as string | undefined) ?? null;
        const refused = code !== null && [...REFUSALS, 'CLOSED'].includes(code);
        if (code === 'INTERNAL' || (r.errors && !code)) failures.push(`${key} as ${c}: ${code}`);
        if (row.may.includes(c) && refused) failures.push(`${key} as ${c}: refused (${code})`);
        if (!row.may.includes(c) && !refused) failures.push(`${key} as ${c}: accepted`);
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it('answers every route as the table says', async () => {
    const failures: Failure[] = [];
    for (const [key, row] of Object.entries(ROUTES)) {
      const make = REQUESTS[key];
      if (!make) continue;
      const request = make(w);
      const answers = await Promise.all(
        CALLERS.map(async (c) => ({ c, res: await w.request(c, request) })),
      );
      for (const { c, res } of answers) {
        const refused =
          ROUTE_REFUSALS.includes(res.status) || (row.may.length === 0 && res.status === 400);
        if (res.status >= 500) failures.push(`${key} as ${c}: HTTP ${res.status}`);
        else if (row.may.includes(c) && refused)
          failures.push(`${key} as ${c}: refused ${res.status}`);
        else if (!row.may.includes(c) && !refused)
          failures.push(`${key} as ${c}: answered ${res.status}`);
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it('answers every mutation root as the table says (taking things away last)', async () => {
    expect(await runGraphqlRows('mutation', MUTATIONS)).toEqual([]);
  }, 180_000);
});
