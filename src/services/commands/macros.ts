import type { UserActor } from '../../auth/actor.js';
import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { CommandMacroTable } from '../../db/tables/commands.js';
import type { Tx } from '../../db/transaction.js';
import { AppError, capExceeded, notFound, validation } from '../../errors.js';
import { workspaceTopic } from '../../events/catalog.js';
import type { EventPort } from '../../events/port.js';
import { emit } from '../../events/publish.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import type { Authz } from '../authz/index.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/index.js';

import { canonicalJson } from './args.js';
import {
  checkInitiator,
  describe,
  type CommandService,
  type ContextInput,
  type PreparedRun,
  type RunResult,
} from './command-service.js';
import { countMacros, deleteMacro, findMacro, insertMacro, macrosPage } from './queries.js';

/** Personal macros one person may keep (workspace macros follow SVC_LIMIT_MACROS_PER_WORKSPACE). */
export const PERSONAL_MACROS_MAX = 100;
export const MACRO_STEPS_MAX = 20;
export const MACRO_PARAMS_MAX = 10;

const NAME = /^[a-z][a-z0-9-]{0,31}$/;
const PARAM = /^[a-z][a-zA-Z0-9_]{0,31}$/;

export interface MacroStep {
  command: string;
  plugin: string | null;
  args: Record<string, unknown>;
}

export interface MacroView {
  id: string;
  serverId: string | null;
  ownerId: string | null;
  name: string;
  description: string | null;
  params: string[];
  steps: MacroStep[];
  createdAt: number;
  updatedAt: number;
}

export interface MacroRunResult {
  status: 'DONE' | 'CONFIRMATION_REQUIRED' | 'FAILED';
  steps: RunResult[];
  /** The index (from 0) of the step that failed; null when none did. */
  failedStep: number | null;
  error: { code: string; message: string } | null;
  confirmation: { token: string; summary: string; expiresAt: number } | null;
}

export interface MacroDeps {
  db: Db;
  config: Config;
  clock: Clock;
  authz: Authz;
  commands: CommandService;
  events: EventPort;
}

/**
 * Macros (docs/commands.md, "Macros"): named sequences of commands with parameters, a person's
 * own or a workspace's. A run checks every step, asks one confirmation covering all destructive
 * steps, then runs them in order, each with its own checks again, stopping at the first failure.
 */
export class Macros {
  constructor(private readonly deps: MacroDeps) {}

  private now() {
    return this.deps.clock.now().getTime();
  }

  async create(
    person: UserActor,
    input: {
      serverId?: unknown;
      name: unknown;
      description?: unknown;
      params?: unknown;
      steps: unknown;
    },
  ): Promise<MacroView> {
    const workspaceId = input.serverId ?? null;
    const name = typeof input.name === 'string' ? input.name.trim().toLowerCase() : '';
    if (!NAME.test(name)) {
      throw validation('name: 1 to 32 of a-z, 0-9 and -, starting with a letter', {
        argument: 'name',
      });
    }
    const description = checkDescription(input.description);
    const params = checkParams(input.params);
    const steps = checkSteps(input.steps);
    const now = this.now();
    const row: CommandMacroTable = {
      id: newId(),
      workspaceId: null,
      ownerId: null,
      name,
      description,
      params: JSON.stringify(params),
      steps: JSON.stringify(steps),
      createdBy: person.accountId,
      createdAt: now,
      updatedAt: now,
    };
    if (workspaceId !== null && (typeof workspaceId !== 'string' || !isId(workspaceId))) {
      throw notFound('workspace');
    }
    // Outside the transaction (the registry reads plugins on its own); a workspace's macro is
    // checked against that workspace's commands only once the caller may manage its macros.
    if (workspaceId !== null) {
      await this.deps.authz.assertCan(person, 'macro:manage', { workspaceId });
    }
    for (const [i, step] of steps.entries()) {
      const at = `steps[${i}].command`;
      await this.deps.commands.assertKnown(person, workspaceId, step.command, step.plugin, at);
    }
    await this.deps.db.transaction(async (tx) => {
      if (workspaceId !== null) {
        await this.deps.authz.assertCan(person, 'macro:manage', { workspaceId, db: tx.db });
        const cap = this.deps.config.limits.macrosPerWorkspace;
        if (cap !== null && (await countMacros(tx.db, { workspaceId })) >= cap) {
          throw capExceeded('macros per workspace', 'SVC_LIMIT_MACROS_PER_WORKSPACE', cap);
        }
        row.workspaceId = workspaceId;
        this.announce(tx, 'WorkspaceMacroCreated', row, person.accountId);
      } else {
        if ((await countMacros(tx.db, { ownerId: person.accountId })) >= PERSONAL_MACROS_MAX) {
          throw validation(`limit reached: at most ${PERSONAL_MACROS_MAX} personal macros`, {
            limit: PERSONAL_MACROS_MAX,
          });
        }
        row.ownerId = person.accountId;
      }
      await insertMacro(tx.db, row);
    });
    return toView(row);
  }

  /** A page of the caller's personal macros, with the workspace's when one is named. */
  async list(person: UserActor, serverId: unknown, args: KeysetArgs = {}): Promise<MacroView[]> {
    const page = parseKeysetArgs(args, { max: 100, default: 100 });
    const workspaceId = await this.workspaceOf(person, serverId);
    const rows = await macrosPage(
      this.deps.db.kysely,
      { ownerId: person.accountId, workspaceId },
      page,
    );
    return keysetRows(rows, page).map(toView);
  }

  /** The workspace a list names, once the caller is found to be in it; null for none. */
  private async workspaceOf(person: UserActor, serverId: unknown): Promise<string | null> {
    if (serverId === undefined || serverId === null) return null;
    if (typeof serverId !== 'string' || !isId(serverId)) throw notFound('workspace');
    await this.deps.authz.requireMember(person, { workspaceId: serverId });
    return serverId;
  }

  async delete(person: UserActor, id: unknown): Promise<boolean> {
    return this.deps.db.transaction(async (tx) => {
      const row = await this.visible(person, id, tx.db);
      if (row.workspaceId) {
        await this.deps.authz.assertCan(person, 'macro:manage', {
          workspaceId: row.workspaceId,
          db: tx.db,
        });
      }
      const deleted = await deleteMacro(tx.db, row.id);
      if (deleted) this.announce(tx, 'WorkspaceMacroDeleted', row, person.accountId);
      return deleted;
    });
  }

  /**
   * A workspace's macro made or deleted reaches every member's open pages (docs/events.md), so
   * their lists and `/` palettes follow; a person's own macros publish nothing.
   */
  private announce(
    tx: Tx,
    type: 'WorkspaceMacroCreated' | 'WorkspaceMacroDeleted',
    row: CommandMacroTable,
    by: string,
  ): void {
    const serverId = row.workspaceId;
    if (serverId === null) return;
    emit(tx, this.deps.events, workspaceTopic(serverId), type, this.now(), {
      audience: { kind: 'workspace' },
      serverId,
      macroId: row.id,
      name: row.name,
      by,
    });
  }

  /** A macro the person may run: their own, or one of a workspace they are in. */
  private async visible(person: UserActor, id: unknown, db = this.deps.db.kysely) {
    if (typeof id !== 'string' || !isId(id)) throw notFound('macro');
    const row = await findMacro(db, id);
    if (!row) throw notFound('macro');
    if (row.ownerId !== null && row.ownerId !== person.accountId) throw notFound('macro');
    if (row.workspaceId !== null) {
      if (!(await this.deps.authz.membership(person, { workspaceId: row.workspaceId, db }))) {
        throw notFound('macro');
      }
    }
    return row;
  }

  /** The macro, its parameter values, context and expanded steps; refusals as thrown. */
  private async load(
    person: UserActor,
    input: { macroId: unknown; args?: unknown; context?: ContextInput | null },
  ) {
    const row = await this.visible(person, input.macroId);
    const view = toView(row);
    const values = checkValues(view.params, input.args);
    const context: ContextInput = { ...(input.context ?? {}) };
    if (row.workspaceId) {
      if (
        context.serverId !== undefined &&
        context.serverId !== null &&
        context.serverId !== row.workspaceId
      ) {
        throw validation('context.serverId: this macro belongs to another workspace', {
          argument: 'context.serverId',
        });
      }
      context.serverId = row.workspaceId;
    }
    const steps = view.steps.map((s) => ({ ...s, args: expand(s.args, values) }));
    return { row, values, context, steps };
  }

  /** executeMacro. */
  async execute(
    person: UserActor,
    input: {
      macroId: unknown;
      args?: unknown;
      context?: ContextInput | null;
      initiator?: unknown;
      confirmationToken?: unknown;
    },
  ): Promise<MacroRunResult> {
    const declared = checkInitiator(input.initiator);
    // Steps run as MACRO for a person (keybind, palette); an agent's macro stays an agent's.
    const initiator = declared === 'AGENT' || declared === 'PIPELINE' ? declared : 'MACRO';
    let loaded;
    try {
      // An agent's macro is refused as a whole while ai_commands is off (FEATURE_DISABLED),
      // audited in the workspace it would have run in.
      if (initiator === 'AGENT' && !this.deps.commands.aiEnabled()) {
        const where = await this.load(person, input).catch(() => null);
        await this.deps.commands.agentGate(initiator, where?.context ?? input.context ?? {});
      }
      loaded = await this.load(person, input);
    } catch (err) {
      const id = typeof input.macroId === 'string' ? input.macroId.slice(0, 40) : '';
      await this.deps.commands.auditRefusal(
        person,
        initiator,
        { command: `macro:${id}`, context: input.context ?? {} },
        null,
        err,
        {},
      );
      throw err;
    }
    const { row, values, context, steps } = loaded;
    const extra = { macroId: row.id };

    // Every step is checked before any runs, so one confirmation can name every destructive one.
    const prepared: PreparedRun[] = [];
    for (const [i, step] of steps.entries()) {
      const stepInput = { command: step.command, plugin: step.plugin, args: step.args, context };
      try {
        prepared.push(await this.deps.commands.prepare(person, initiator, stepInput));
      } catch (err) {
        await this.deps.commands.auditRefusal(person, initiator, stepInput, null, err, extra);
        if (err instanceof AppError) return failedAt(i, [], err);
        throw err;
      }
    }
    const destructive = prepared.filter((p) => p.cmd.destructive);
    const token = input.confirmationToken;
    if (destructive.length > 0) {
      const subject = {
        what: `macro:${row.id}`,
        args: values,
        context: prepared[0]!.context,
        steps: canonicalJson(steps),
      };
      if (token === undefined || token === null) {
        const summary = destructive.map(describe).join('; then ');
        const asked = await this.deps.commands.askConfirmation(destructive[0]!, subject, summary, {
          ...extra,
          macroName: row.name,
          macroArgs: values,
        });
        return {
          status: 'CONFIRMATION_REQUIRED',
          steps: [],
          failedStep: null,
          error: null,
          confirmation: asked.confirmation,
        };
      }
      try {
        await this.deps.commands.confirmations.spend(token, person.accountId, subject, this.now());
      } catch (err) {
        await this.deps.commands.auditRefusal(
          person,
          initiator,
          { command: `macro:${row.name}`, context, confirmationToken: token },
          null,
          err,
          extra,
        );
        throw err;
      }
    } else if (token !== undefined && token !== null) {
      throw validation('confirmationToken: this macro needs no confirmation', {
        argument: 'confirmationToken',
      });
    }

    const done: RunResult[] = [];
    for (const [i, p] of prepared.entries()) {
      try {
        done.push(
          await this.deps.commands.perform(p, {
            confirmation: p.cmd.destructive ? 'USED' : null,
            macroId: row.id,
          }),
        );
      } catch (err) {
        await this.deps.commands.auditRefusal(
          person,
          initiator,
          { command: p.cmd.name, args: p.args, context },
          p,
          err,
          extra,
        );
        if (err instanceof AppError) return failedAt(i, done, err);
        throw err;
      }
    }
    return { status: 'DONE', steps: done, failedStep: null, error: null, confirmation: null };
  }
}

function failedAt(i: number, steps: RunResult[], err: AppError): MacroRunResult {
  return {
    status: 'FAILED',
    steps,
    failedStep: i,
    error: { code: err.code, message: err.message },
    confirmation: null,
  };
}

function toView(row: CommandMacroTable): MacroView {
  return {
    id: row.id,
    serverId: row.workspaceId,
    ownerId: row.ownerId,
    name: row.name,
    description: row.description,
    params: JSON.parse(row.params) as string[],
    steps: JSON.parse(row.steps) as MacroStep[],
    createdAt: Number(row.createdAt),
    updatedAt: Number(row.updatedAt),
  };
}

function checkDescription(input: unknown): string | null {
  if (input === undefined || input === null || input === '') return null;
  if (typeof input !== 'string' || [...input].length > 200) {
    throw validation('description: at most 200 characters', { argument: 'description' });
  }
  return input;
}

function checkParams(input: unknown): string[] {
  if (input === undefined || input === null) return [];
  if (!Array.isArray(input) || input.length > MACRO_PARAMS_MAX) {
    throw validation(`params: a list of at most ${MACRO_PARAMS_MAX} names`, { argument: 'params' });
  }
  const out: string[] = [];
  for (const p of input) {
    if (typeof p !== 'string' || !PARAM.test(p) || out.includes(p)) {
      throw validation(`params: "${String(p)}" is not a parameter name (a-z, 0-9, _) or repeats`, {
        argument: 'params',
      });
    }
    out.push(p);
  }
  return out;
}

/** Steps of a macro or pipeline: 1 to 20 `{ command, plugin?, args? }`. */
export function checkSteps(input: unknown, max = MACRO_STEPS_MAX): MacroStep[] {
  if (!Array.isArray(input) || input.length === 0 || input.length > max) {
    throw validation(`steps: 1 to ${max} steps`, { argument: 'steps' });
  }
  return input.map((s: unknown, i) => {
    const step = (s ?? {}) as Record<string, unknown>;
    const command = typeof step.command === 'string' ? step.command.trim().replace(/^\//, '') : '';
    if (!NAME.test(command)) {
      throw validation(`steps[${i}].command: name a command`, { argument: `steps[${i}].command` });
    }
    const args = step.args ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw validation(`steps[${i}].args: an object of arguments`, {
        argument: `steps[${i}].args`,
      });
    }
    if (canonicalJson(args).length > 8000) {
      throw validation(`steps[${i}].args: at most 8,000 characters`, {
        argument: `steps[${i}].args`,
      });
    }
    const plugin = typeof step.plugin === 'string' && step.plugin !== '' ? step.plugin : null;
    return { command, plugin, args: args as Record<string, unknown> };
  });
}

function checkValues(params: readonly string[], input: unknown): Record<string, string> {
  const given = (input ?? {}) as Record<string, unknown>;
  if (typeof given !== 'object' || Array.isArray(given)) {
    throw validation('args must be an object of parameter names to values');
  }
  const out: Record<string, string> = {};
  for (const name of Object.keys(given)) {
    if (!params.includes(name)) {
      throw new AppError('VALIDATION', `${name}: this macro has no parameter "${name}"`, {
        argument: name,
      });
    }
  }
  for (const p of params) {
    const v = given[p];
    if (v === undefined || v === null) {
      throw new AppError('VALIDATION', `${p}: this macro needs a value for ${p}`, { argument: p });
    }
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      throw new AppError('VALIDATION', `${p}: must be text, a number or true/false`, {
        argument: p,
      });
    }
    out[p] = String(v);
  }
  return out;
}

/** Replaces `{{name}}` in string values with the parameter's value. */
export function expand(args: Record<string, unknown>, values: Record<string, string>) {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    out[k] =
      typeof v === 'string'
        ? v.replace(/\{\{\s*([a-zA-Z][a-zA-Z0-9_]*)\s*\}\}/g, (m, n: string) => values[n] ?? m)
        : v;
  }
  return out;
}
