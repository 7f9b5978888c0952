import type { Logger } from 'pino';

import {
  assertInstanceOperator,
  type Actor,
  type DelegatedActor,
  type UserActor,
} from '../../auth/actor.js';
import { featureEnabled, type Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import { AppError, featureDisabled, forbidden, notFound, validation } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { isId } from '../../lib/ids.js';
import type { Authz } from '../authz/index.js';
import { findConversation } from '../conversations/index.js';
import type { AuditLog } from '../audit/index.js';
import { keyCursor, keysetPageOf, parseKeysetArgs } from '../paging/index.js';
import { listWorkspacesOf } from '../workspaces/index.js';

import { checkArgs, parseLine, redactArgs } from './args.js';
import { auditEntryOf } from './audit-entry.js';
import { Confirmations, type ConfirmationSubject } from './confirmations.js';
import { rank } from './discover.js';
import { commandAuditPage } from './queries.js';
import type { CommandRegistry } from './registry.js';
import type {
  ContextInput,
  ExecuteInput,
  CommandView,
  RunStatus,
  RunResult,
  PreparedRun,
  RunAudit,
} from './run-shapes.js';
import {
  INITIATORS,
  SURFACES,
  type CommandDef,
  type Initiator,
  type RunContext,
  type Surface,
} from './types.js';

export interface CommandServiceDeps {
  db: Db;
  config: Config;
  clock: Clock;
  log: Logger;
  authz: Authz;
  audit: AuditLog;
  registry: CommandRegistry;
}

export type * from './run-shapes.js';

export const DISCOVER_MAX = 20;
export const COMMAND_AUDIT_PAGE_MAX = 200;

/**
 * The command system (docs/commands.md): the registry as a caller sees it, runs with their checks,
 * confirmations and audit, and discovery for agents. Every way of running a command (a person, a
 * keybind, a macro step, a pipeline step, an agent) goes through `prepare` and `perform`.
 */
export class CommandService {
  readonly confirmations: Confirmations;
  /** The command and context a refused preparation had found, for its audit row. */
  private readonly refusedRuns = new WeakMap<Error, { cmd?: CommandDef; context: RunContext }>();

  constructor(private readonly deps: CommandServiceDeps) {
    this.confirmations = new Confirmations(deps.db);
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  aiEnabled(): boolean {
    return featureEnabled(this.deps.config, 'ai_commands');
  }

  /** The command as GraphQL shows it. */
  view(cmd: CommandDef): CommandView {
    const ai = this.aiEnabled();
    return {
      name: cmd.name,
      description: cmd.description,
      arguments: cmd.args.map((a) => ({
        name: a.name,
        type: a.type.toUpperCase(),
        description: a.description,
        required: a.required,
      })),
      capability: cmd.capability,
      // While ai_commands is off no agent may run it, so it is offered on no AI surface.
      surfaces: ai ? [...cmd.surfaces] : cmd.surfaces.filter((x) => x !== 'AI'),
      destructive: cmd.destructive,
      source: cmd.source,
      nlDescription: ai ? cmd.nlDescription : null,
      intentSamples: ai ? [...cmd.intentSamples] : [],
      aiCallable: ai && cmd.aiCallable,
    };
  }

  /**
   * The commands the caller may run on a surface, in a context (a workspace, optionally a
   * conversation). FEATURE_DISABLED for the AI surface while `ai_commands` is off.
   */
  async list(
    person: UserActor,
    surface: unknown,
    context: ContextInput = {},
  ): Promise<CommandView[]> {
    const s = checkSurface(surface);
    if (s === 'AI' && !this.aiEnabled()) throw featureDisabled('ai_commands');
    return (await this.runnable(person, s, context)).map((c) => this.view(c));
  }

  private async runnable(person: UserActor, surface: Surface, input: ContextInput) {
    const context = await this.resolveContext(input);
    if (
      context.workspaceId &&
      !(await this.deps.authz.membership(person, { workspaceId: context.workspaceId }))
    ) {
      throw notFound('workspace');
    }
    const initiator: Initiator = surface === 'AI' ? 'AGENT' : 'USER';
    const inChannel = context.conversationId ? await this.isChannel(context.conversationId) : null;
    const out: CommandDef[] = [];
    for (const cmd of await this.deps.registry.all(context.workspaceId)) {
      if (!cmd.surfaces.includes(surface)) continue;
      if (cmd.channelOnly && inChannel === false) continue;
      if (surface === 'AI' && !cmd.aiCallable) continue;
      if (cmd.needsWorkspace && !context.workspaceId) continue;
      if (await this.allowed(this.actorFor(person, initiator, cmd), cmd, context)) out.push(cmd);
    }
    return out;
  }

  /**
   * The AI-callable built-ins an agent acting for the person may run somewhere: in at least one
   * workspace they are in, or without one. For `svc mcp`'s tool list, which has no context; each
   * run is checked again in its own.
   */
  async agentRunnable(person: UserActor): Promise<CommandDef[]> {
    // The direct space too: its conversations (direct and group) are everyone's.
    const workspaces = [
      DIRECT_SPACE_ID,
      ...(await listWorkspacesOf(this.deps.db.kysely, person.accountId)).map((w) => w.id),
    ];
    const out: CommandDef[] = [];
    for (const cmd of this.deps.registry.allBuiltins()) {
      if (!cmd.aiCallable) continue;
      const actor = this.actorFor(person, 'AGENT', cmd);
      const places: Array<string | null> = cmd.needsWorkspace ? workspaces : [null];
      for (const workspaceId of places) {
        if (await this.allowed(actor, cmd, { workspaceId, conversationId: null })) {
          out.push(cmd);
          break;
        }
      }
    }
    return out;
  }

  /** Ranks the caller's AI-callable commands for a request in words. */
  async discover(
    person: UserActor,
    query: unknown,
    context: ContextInput = {},
    limit: unknown = 5,
  ): Promise<Array<{ command: CommandView; score: number }>> {
    if (!this.aiEnabled()) throw featureDisabled('ai_commands');
    if (typeof query !== 'string' || query.trim() === '' || query.length > 1000) {
      throw validation('query: describe what you want done in 1 to 1,000 characters', {
        argument: 'query',
      });
    }
    const n = limit ?? 5;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > DISCOVER_MAX) {
      throw validation(`limit must be a whole number from 1 to ${DISCOVER_MAX}`, {
        argument: 'limit',
      });
    }
    const cmds = await this.runnable(person, 'AI', context);
    return rank(query, cmds, n).map((r) => ({ command: this.view(r.command), score: r.score }));
  }

  /**
   * Runs a command for a person (executeCommand): checks, then either asks for a confirmation
   * (destructive commands without a token), or spends the token and runs. One audit row either
   * way, refusals included.
   */
  async execute(person: UserActor, input: ExecuteInput): Promise<RunResult> {
    const initiator = checkInitiator(input.initiator);
    const started = this.now();
    let prepared: PreparedRun | null = null;
    try {
      prepared = await this.prepare(person, initiator, input);
      const p = prepared;
      if (p.cmd.destructive) {
        const subject = this.subjectOf(p);
        if (input.confirmationToken === undefined || input.confirmationToken === null) {
          return await this.askConfirmation(p, subject, describe(p), {});
        }
        await this.confirmations.spend(input.confirmationToken, person.accountId, subject, started);
        return await this.perform(p, { confirmation: 'USED' });
      }
      if (input.confirmationToken !== undefined && input.confirmationToken !== null) {
        throw validation('confirmationToken: this command needs no confirmation', {
          argument: 'confirmationToken',
        });
      }
      return await this.perform(p, { confirmation: null });
    } catch (err) {
      await this.auditRefusal(person, initiator, input, prepared, err, {});
      throw err;
    }
  }

  /**
   * Checks a run without running it: the initiator's gate, the command, its context, arguments
   * and the capability for the actor it will run as.
   */
  async prepare(
    person: UserActor,
    initiator: Initiator,
    input: ExecuteInput,
  ): Promise<PreparedRun> {
    await this.agentGate(initiator, input.context ?? {});
    if (typeof input.command !== 'string' || input.command.trim() === '') {
      throw validation('command: name the command to run', { argument: 'command' });
    }
    const name = input.command.trim().replace(/^\//, '').toLowerCase();
    const plugin = typeof input.plugin === 'string' && input.plugin !== '' ? input.plugin : null;
    const context = await this.resolveContext(input.context ?? {});
    const cmd = await this.deps.registry.find(context.workspaceId, name, plugin);
    if (!cmd) throw notFound(`command /${name}`);
    try {
      if (initiator === 'AGENT' && !cmd.aiCallable) {
        throw forbidden(`/${cmd.name} cannot be run by an agent`);
      }
      if (cmd.needsWorkspace && !context.workspaceId) {
        throw validation(`context.serverId: /${cmd.name} runs in a workspace`, {
          argument: 'context.serverId',
        });
      }
      if (cmd.needsConversation && !context.conversationId) {
        throw validation(`context.conversationId: /${cmd.name} runs in a conversation`, {
          argument: 'context.conversationId',
        });
      }
      if (cmd.channelOnly && !(await this.isChannel(context.conversationId as string))) {
        throw validation(`context.conversationId: /${cmd.name} runs in a channel`, {
          argument: 'context.conversationId',
        });
      }
      const actor = this.actorFor(person, initiator, cmd);
      await this.assertAllowed(actor, cmd, context);
      const labels: Record<string, string> = {};
      const given = input.text !== undefined && input.text !== null ? input.text : undefined;
      if (given !== undefined && input.args !== undefined && input.args !== null) {
        throw validation('give either args or text, not both', { argument: 'text' });
      }
      const raw = given !== undefined ? parseLine(cmd.args, given) : input.args;
      const args = await checkArgs(this.deps.db.kysely, cmd.args, raw, labels);
      if (context.conversationId) {
        const conv = await findConversation(this.deps.db.kysely, context.conversationId);
        if (conv?.name) labels.channel = `#${conv.name}`;
      }
      return { cmd, args, context, person, actor, initiator, labels };
    } catch (err) {
      // The audit of this refusal names the command it found.
      if (err instanceof Error) this.refusedRuns.set(err, { cmd, context });
      throw err;
    }
  }

  /**
   * FEATURE_DISABLED for an AGENT run while `ai_commands` is off. The refusal is audited where
   * the run would have been (the context's workspace, a conversation's own), so that workspace's
   * moderators see agents refused there; a context that does not resolve leaves the account's.
   */
  async agentGate(initiator: Initiator, context: ContextInput): Promise<void> {
    if (initiator !== 'AGENT' || this.aiEnabled()) return;
    const err = featureDisabled('ai_commands');
    const resolved = await this.resolveContext(context).catch(() => null);
    if (resolved) this.refusedRuns.set(err, { context: resolved });
    throw err;
  }

  /**
   * VALIDATION naming `argument` unless a keybind or macro step names a command that exists where
   * it will run: a built-in, or a command of the workspace's enabled plugins (for a person's own,
   * of any workspace they are in). Checked at creation so a typo is refused while it is written
   * rather than when pressed; a plugin removed later still fails when run.
   */
  async assertKnown(
    person: UserActor,
    workspaceId: string | null,
    name: string,
    plugin: string | null,
    argument: string,
  ): Promise<void> {
    if (!plugin && this.deps.registry.builtin(name)) return;
    const where = workspaceId
      ? [workspaceId]
      : (await listWorkspacesOf(this.deps.db.kysely, person.accountId)).map((w) => w.id);
    for (const id of where) {
      if (await this.deps.registry.find(id, name, plugin)) return;
    }
    const of = plugin ? ` of plugin "${plugin}"` : '';
    throw validation(`${argument}: there is no command /${name}${of}`, { argument });
  }

  /** Runs a prepared command (a confirmation, if needed, already spent) and audits it. */
  async perform(
    p: PreparedRun,
    extra: { confirmation: 'USED' | null; macroId?: string; pipelineId?: string },
  ): Promise<RunResult> {
    // The capability again at the moment of running: a macro's later step, a confirmation
    // spent minutes after it was issued, a pipeline whose owner was demoted meanwhile.
    await this.assertAllowed(p.actor, p.cmd, p.context);
    let status: RunStatus = 'DONE';
    let message = '';
    let messageId: string | null = null;
    if (p.cmd.run) {
      const r = await p.cmd.run({
        actor: p.actor,
        person: p.person,
        args: p.args,
        context: p.context,
        now: this.now(),
      });
      message = r.message;
      messageId = r.messageId ?? null;
    } else {
      status = 'CLIENT_ACTION';
      message = `run by the ${p.cmd.source.pluginId ?? 'plugin'} plugin in your client`;
    }
    const auditId = await this.record(p.person, p.context, {
      ...this.auditBase(p),
      outcome: status,
      confirmation: extra.confirmation,
      macroId: extra.macroId ?? null,
      pipelineId: extra.pipelineId ?? null,
    });
    return {
      status,
      command: this.view(p.cmd),
      message,
      messageId,
      confirmation: null,
      auditId,
      args: status === 'CLIENT_ACTION' ? p.args : null,
    };
  }

  /** Issues a confirmation for a destructive run and audits the request for one. */
  async askConfirmation(
    p: PreparedRun,
    subject: ConfirmationSubject,
    summary: string,
    extra: { macroId?: string; macroName?: string; macroArgs?: Record<string, unknown> },
  ): Promise<RunResult> {
    const { token, expiresAt } = await this.confirmations.issue(
      p.person.accountId,
      subject,
      this.now(),
    );
    const base = this.auditBase(p);
    const auditId = await this.record(p.person, p.context, {
      ...base,
      // A macro's one confirmation is the macro's row, not its first destructive step's.
      ...(extra.macroName
        ? {
            command: `macro:${extra.macroName}`,
            source: null,
            args: redactArgs([], extra.macroArgs ?? {}),
          }
        : {}),
      outcome: 'CONFIRMATION_REQUIRED',
      confirmation: 'ISSUED',
      macroId: extra.macroId ?? null,
    });
    return {
      status: 'CONFIRMATION_REQUIRED',
      command: this.view(p.cmd),
      message: `Confirm to ${summary}.`,
      messageId: null,
      confirmation: { token, summary, expiresAt },
      auditId,
      args: null,
    };
  }

  /** What a confirmation of this run is bound to. */
  subjectOf(p: PreparedRun): ConfirmationSubject {
    return {
      what: `command:${p.cmd.name}@${p.cmd.source.workspacePluginId ?? 'builtin'}`,
      args: p.args,
      context: p.context,
    };
  }

  /** Audits a run that did not happen (a refusal, a validation error, a failed service call). */
  async auditRefusal(
    person: UserActor,
    initiator: Initiator,
    input: ExecuteInput,
    prepared: PreparedRun | null,
    err: unknown,
    extra: { macroId?: string; pipelineId?: string },
  ): Promise<void> {
    const error =
      err instanceof AppError
        ? { code: err.code, message: err.message }
        : { code: 'INTERNAL', message: 'server fault' };
    const found = err instanceof Error ? this.refusedRuns.get(err) : undefined;
    const rawContext = input.context ?? {};
    const context: RunContext = prepared?.context ??
      found?.context ?? {
        workspaceId:
          typeof rawContext.serverId === 'string' && isId(rawContext.serverId)
            ? rawContext.serverId
            : null,
        conversationId:
          typeof rawContext.conversationId === 'string' && isId(rawContext.conversationId)
            ? rawContext.conversationId
            : null,
      };
    const base = prepared
      ? this.auditBase(prepared)
      : {
          initiator,
          command:
            found?.cmd?.name ??
            (typeof input.command === 'string' ? input.command.slice(0, 64) : ''),
          source: found?.cmd?.source.pluginId ?? null,
          args:
            input.args && typeof input.args === 'object' && !Array.isArray(input.args)
              ? redactArgs(found?.cmd?.args ?? [], input.args as Record<string, unknown>)
              : typeof input.text === 'string'
                ? { text: input.text.slice(0, 200) }
                : {},
          context: { serverId: context.workspaceId, conversationId: context.conversationId },
        };
    try {
      await this.record(person, context, {
        ...base,
        outcome: 'REFUSED',
        error,
        confirmation: input.confirmationToken ? 'PRESENTED' : null,
        macroId: extra.macroId ?? null,
        pipelineId: extra.pipelineId ?? null,
      });
    } catch (auditErr) {
      this.deps.log.error({ err: auditErr }, 'command audit row not written');
    }
  }

  private auditBase(p: PreparedRun) {
    return {
      initiator: p.initiator,
      command: p.cmd.name,
      source: p.cmd.source.pluginId,
      args: redactArgs(p.cmd.args, p.args),
      context: { serverId: p.context.workspaceId, conversationId: p.context.conversationId },
    };
  }

  /** Writes one command audit row; answers its id. */
  async record(person: UserActor, context: RunContext, details: RunAudit): Promise<string> {
    const target = context.workspaceId
      ? `workspace:${context.workspaceId}`
      : `account:${person.accountId}`;
    const row = await this.deps.db.transaction((tx) =>
      this.deps.audit.record(tx, {
        kind: 'command',
        action: 'command.run',
        actorId: person.accountId,
        target,
        details: { ...details },
      }),
    );
    return row.id;
  }

  /** The actor a run acts as: the person, or an agent or pipeline acting for them. */
  actorFor(person: UserActor, initiator: Initiator, cmd: CommandDef): Actor {
    if (initiator !== 'AGENT' && initiator !== 'PIPELINE') return person;
    const delegated: DelegatedActor = {
      kind: initiator === 'AGENT' ? 'agent' : 'pipeline',
      onBehalfOf: person,
      grant: { id: `command:${cmd.name}`, actions: cmd.actions },
    };
    return delegated;
  }

  private async allowed(actor: Actor, cmd: CommandDef, context: RunContext): Promise<boolean> {
    try {
      await this.assertAllowed(actor, cmd, context);
      return true;
    } catch (err) {
      if (err instanceof AppError) return false;
      throw err;
    }
  }

  private async assertAllowed(actor: Actor, cmd: CommandDef, context: RunContext): Promise<void> {
    if (cmd.capability === 'self') {
      if (context.workspaceId)
        await this.deps.authz.requireMember(actor, { workspaceId: context.workspaceId });
      return;
    }
    if (cmd.capability === 'instance:operator') {
      assertInstanceOperator(actor, `/${cmd.name} is for instance operators`);
      return;
    }
    if (!context.workspaceId) throw validation(`/${cmd.name} runs in a workspace`);
    await this.deps.authz.assertCan(actor, cmd.capability, { workspaceId: context.workspaceId });
  }

  private async isChannel(conversationId: string): Promise<boolean> {
    return (await findConversation(this.deps.db.kysely, conversationId))?.kind === 'channel';
  }

  /** The context's workspace and conversation; NOT_FOUND for a conversation elsewhere. */
  async resolveContext(input: ContextInput): Promise<RunContext> {
    const serverId = input.serverId ?? null;
    const conversationId = input.conversationId ?? null;
    if (serverId !== null && (typeof serverId !== 'string' || !isId(serverId)))
      throw notFound('workspace');
    if (conversationId === null) return { workspaceId: serverId, conversationId: null };
    if (typeof conversationId !== 'string' || !isId(conversationId)) throw notFound('conversation');
    const conv = await findConversation(this.deps.db.kysely, conversationId);
    if (!conv || (serverId !== null && conv.workspaceId !== serverId))
      throw notFound('conversation');
    return { workspaceId: conv.workspaceId, conversationId };
  }

  /**
   * A workspace's command audit, newest first (owner and Moderators: `audit:view`), a page at a
   * time as `instanceAuditLog`: `before` a cursor goes on to older entries, `after` one back to
   * newer; `nextCursor` always leads to older entries, `prevCursor` to newer.
   */
  async auditPage(
    person: UserActor,
    serverId: unknown,
    opts: { before?: string | null; after?: string | null; limit?: number | null } = {},
  ) {
    if (typeof serverId !== 'string' || !isId(serverId)) throw notFound('workspace');
    await this.deps.authz.assertCan(person, 'audit:view', { workspaceId: serverId });
    // In the list's order (newest first) older entries come after a cursor, newer ones before.
    const page = parseKeysetArgs(
      { after: opts.before, before: opts.after, limit: opts.limit },
      { max: COMMAND_AUDIT_PAGE_MAX, default: 50 },
    );
    const rows = await commandAuditPage(this.deps.db.kysely, `workspace:${serverId}`, page);
    const at = keysetPageOf(rows, page, (r) => keyCursor(Number(r.createdAt), r.id));
    const entries = at.items.map(auditEntryOf);
    return page.before
      ? { entries, nextCursor: at.prevCursor, prevCursor: at.nextCursor }
      : { entries, nextCursor: at.nextCursor, prevCursor: at.prevCursor };
  }
}

/** What a run will do, in words, for its confirmation. */
export function describe(p: PreparedRun): string {
  return p.cmd.describe ? p.cmd.describe(p.args, p.labels) : `run /${p.cmd.name}`;
}

export function checkInitiator(input: unknown): Initiator {
  if (input === undefined || input === null) return 'USER';
  if (typeof input === 'string' && (INITIATORS as readonly string[]).includes(input)) {
    return input as Initiator;
  }
  throw validation(`initiator must be one of ${INITIATORS.join(', ')}`, { argument: 'initiator' });
}

function checkSurface(input: unknown): Surface {
  if (typeof input === 'string' && (SURFACES as readonly string[]).includes(input)) {
    return input as Surface;
  }
  throw validation(`surface must be one of ${SURFACES.join(', ')}`, { argument: 'surface' });
}
