import type { Logger } from 'pino';

import { personWithoutSession, type UserActor } from '../../auth/actor.js';
import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { Tx } from '../../db/transaction.js';
import type { CommandPipelineTable } from '../../db/tables/commands.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { EventBus } from '../../events/bus.js';
import type { EventPort } from '../../events/port.js';
import { SharedCache } from '../../events/shared-cache.js';
import { AppError, capExceeded, notFound, validation } from '../../errors.js';
import { HOUR_MS, MINUTE_MS, type Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { findAccountById } from '../accounts/index.js';
import type { Authz } from '../authz/index.js';
import {
  canRead,
  readFactsOf,
  findConversation,
  findConversationAccess,
} from '../conversations/index.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/index.js';

import type { CommandService } from './command-service.js';
import { checkSteps, expand, type MacroStep } from './macros.js';
import { compilePattern, matchPattern } from './pattern.js';
import {
  claimScheduledRun,
  countPipelineRun,
  countPipelines,
  deletePipeline,
  dueScheduledPipelines,
  findPipeline,
  insertPipeline,
  pipelinesListening,
  pipelinesPage,
  updatePipeline,
} from './queries.js';
import type { CommandRegistry } from './registry.js';

/** Runs one pipeline may make per hour; past it, triggers are skipped until the hour ends. */
export const PIPELINE_RUNS_PER_HOUR = 60;
export const PIPELINE_STEPS_MAX = 10;
export const SCHEDULE_MIN_MINUTES = 5;
export const SCHEDULE_MAX_MINUTES = 7 * 24 * 60;

export type Trigger =
  | { kind: 'MESSAGE'; pattern: string; channelIds: string[] }
  | { kind: 'MEMBER_JOINED' }
  | { kind: 'SCHEDULE'; everyMinutes: number };

export interface PipelineView {
  id: string;
  serverId: string;
  ownerId: string;
  name: string;
  enabled: boolean;
  trigger: Trigger;
  channelId: string | null;
  steps: MacroStep[];
  stoppedReason: string | null;
  lastRunAt: number | null;
  nextRunAt: number | null;
  createdAt: number;
}

interface Stored {
  trigger: Trigger;
  channelId: string | null;
}

export interface PipelineDeps {
  db: Db;
  config: Config;
  clock: Clock;
  log: Logger;
  authz: Authz;
  commands: CommandService;
  registry: CommandRegistry;
  bus: EventBus;
  events: EventPort;
}

/**
 * Pipelines (docs/commands.md, "Pipelines"): a trigger and steps, run as PIPELINE with the
 * capabilities their owner has when they run. An owner who lost one stops the pipeline, which
 * says why. A pipeline's own messages trigger no pipeline; each has a run cap per hour; patterns
 * are globs matched in bounded time (pattern.ts); scheduled runs are claimed by a compare-and-set
 * on `nextRunAt`, so one process of several runs each.
 */
export class Pipelines {
  /** Conversations a pipeline is posting in right now, with the posting owner (own output). */
  private readonly posting = new Map<string, number>();

  /**
   * The enabled pipelines of each workspace, read by every new message and join: kept per process
   * and dropped after each change (a stale entry can only make `takeRun` read the row again).
   */
  private readonly listening: SharedCache<CommandPipelineTable[]>;

  constructor(private readonly deps: PipelineDeps) {
    this.listening = new SharedCache(deps.bus, {
      name: 'pipelines',
      max: 10_000,
      events: deps.events,
    });
  }

  /** After `tx` commits, forgets the cached pipelines of a workspace (of all when omitted). */
  forgetOnCommit(tx: Tx, workspaceId?: string): void {
    this.listening.invalidateOnCommit(tx, workspaceId);
  }

  private listeningIn(workspaceId: string): Promise<CommandPipelineTable[]> {
    return this.listening.get(workspaceId, () =>
      pipelinesListening(this.deps.db.kysely, workspaceId),
    );
  }

  private now() {
    return this.deps.clock.now().getTime();
  }

  async create(
    person: UserActor,
    input: {
      serverId: unknown;
      name: unknown;
      trigger: unknown;
      channelId?: unknown;
      steps: unknown;
    },
  ): Promise<PipelineView> {
    const workspaceId = input.serverId;
    if (typeof workspaceId !== 'string' || !isId(workspaceId)) throw notFound('workspace');
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name === '' || [...name].length > 64) {
      throw validation('name: 1 to 64 characters', { argument: 'name' });
    }
    const trigger = checkTrigger(input.trigger);
    const steps = checkSteps(input.steps, PIPELINE_STEPS_MAX);
    for (const [i, s] of steps.entries()) {
      const cmd = this.deps.registry.builtin(s.command);
      if (!cmd || s.plugin) {
        throw validation(`steps[${i}].command: a pipeline runs built-in commands only`, {
          argument: `steps[${i}].command`,
        });
      }
      // Nobody is there to confirm a pipeline's run.
      if (cmd.destructive) {
        throw validation(
          `steps[${i}].command: /${cmd.name} needs a confirmation; a pipeline cannot run it`,
          {
            argument: `steps[${i}].command`,
          },
        );
      }
    }
    const channelId = input.channelId ?? null;
    if (channelId !== null && (typeof channelId !== 'string' || !isId(channelId))) {
      throw notFound('channel');
    }
    const now = this.now();
    const row: CommandPipelineTable = {
      id: newId(),
      workspaceId,
      ownerId: person.accountId,
      name,
      enabled: 1,
      trigger: JSON.stringify({ trigger, channelId } satisfies Stored),
      steps: JSON.stringify(steps),
      nextRunAt: trigger.kind === 'SCHEDULE' ? now + trigger.everyMinutes * MINUTE_MS : null,
      windowStart: now,
      windowRuns: 0,
      stoppedReason: null,
      lastRunAt: null,
      createdAt: now,
    };
    await this.deps.db.transaction(async (tx) => {
      await this.deps.authz.assertCan(person, 'pipeline:manage', { workspaceId, db: tx.db });
      const channels = [
        ...(trigger.kind === 'MESSAGE' ? trigger.channelIds : []),
        ...(channelId ? [channelId] : []),
      ];
      for (const id of channels) {
        const conv = await findConversation(tx.db, id);
        if (!conv || conv.workspaceId !== workspaceId) throw notFound('channel');
      }
      const cap = this.deps.config.limits.pipelinesPerWorkspace;
      if (cap !== null && (await countPipelines(tx.db, workspaceId)) >= cap) {
        throw capExceeded('pipelines per workspace', 'SVC_LIMIT_PIPELINES_PER_WORKSPACE', cap);
      }
      await insertPipeline(tx.db, row);
      this.listening.invalidateOnCommit(tx, workspaceId);
    });
    return toView(row);
  }

  /** A page of a workspace's pipelines, oldest first. */
  async list(person: UserActor, serverId: unknown, args: KeysetArgs = {}): Promise<PipelineView[]> {
    const page = parseKeysetArgs(args, { max: 100, default: 100 });
    if (typeof serverId !== 'string' || !isId(serverId)) throw notFound('workspace');
    await this.deps.authz.assertCan(person, 'pipeline:manage', { workspaceId: serverId });
    return keysetRows(await pipelinesPage(this.deps.db.kysely, serverId, page), page).map(toView);
  }

  async delete(person: UserActor, id: unknown): Promise<boolean> {
    return this.deps.db.transaction(async (tx) => {
      const row = await this.managed(person, id, tx.db);
      this.listening.invalidateOnCommit(tx, row.workspaceId);
      return deletePipeline(tx.db, row.id);
    });
  }

  /** Turns a pipeline on (clearing why it stopped) or off. */
  async setEnabled(person: UserActor, id: unknown, enabled: boolean): Promise<PipelineView> {
    return this.deps.db.transaction(async (tx) => {
      const row = await this.managed(person, id, tx.db);
      const patch = { enabled: enabled ? 1 : 0, stoppedReason: enabled ? null : row.stoppedReason };
      await updatePipeline(tx.db, row.id, patch);
      this.listening.invalidateOnCommit(tx, row.workspaceId);
      return toView({ ...row, ...patch });
    });
  }

  private async managed(person: UserActor, id: unknown, db = this.deps.db.kysely) {
    if (typeof id !== 'string' || !isId(id)) throw notFound('pipeline');
    const row = await findPipeline(db, id);
    if (!row || !(await this.deps.authz.membership(person, { workspaceId: row.workspaceId, db }))) {
      throw notFound('pipeline');
    }
    await this.deps.authz.assertCan(person, 'pipeline:manage', {
      workspaceId: row.workspaceId,
      db,
    });
    return row;
  }

  /** Trigger work started by the hooks and not finished yet (see `idle`). */
  private readonly inFlight = new Set<Promise<unknown>>();

  /** Tracks hook-started work so shutdown and tests can wait for it. */
  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  /**
   * Resolves once no trigger work is running, including work the finished work started (a
   * pipeline's step may trigger another area's hooks). The context awaits it before closing.
   */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** The message hook: pipelines of the workspace whose pattern the new message matches. */
  onMessage(message: MessageTable): Promise<void> {
    return this.track(this.matchMessage(message));
  }

  /** The join hook: pipelines of the workspace that greet new members. */
  onJoined(workspaceId: string, accountId: string): Promise<void> {
    return this.track(this.matchJoin(workspaceId, accountId));
  }

  private async matchMessage(message: MessageTable): Promise<void> {
    if (message.text === null) return;
    // A pipeline's own output triggers nothing (no loops, no ping-pong between two pipelines).
    if (this.posting.has(`${message.conversationId}\n${message.authorId}`)) return;
    const rows = await this.listeningIn(message.workspaceId);
    for (const row of rows) {
      const { trigger } = stored(row);
      if (trigger.kind !== 'MESSAGE') continue;
      if (trigger.channelIds.length > 0 && !trigger.channelIds.includes(message.conversationId))
        continue;
      if (!matchPattern(compilePattern(trigger.pattern), message.text)) continue;
      // Only messages its owner could read: a pipeline never carries a private conversation's
      // text into its steps, their audit rows or another conversation.
      if (!(await this.ownerReads(row.ownerId, message.conversationId))) continue;
      await this.run(row, {
        conversationId: message.conversationId,
        vars: { text: message.text, user: message.authorId, channel: message.conversationId },
      });
    }
  }

  private async ownerReads(ownerId: string, conversationId: string): Promise<boolean> {
    const access = await findConversationAccess(this.deps.db.kysely, conversationId, ownerId);
    return !!access && canRead(readFactsOf(access), this.now());
  }

  private async matchJoin(workspaceId: string, accountId: string): Promise<void> {
    const rows = await this.listeningIn(workspaceId);
    for (const row of rows) {
      if (stored(row).trigger.kind !== 'MEMBER_JOINED') continue;
      await this.run(row, { conversationId: null, vars: { user: accountId } });
    }
  }

  /** The scheduler's job: runs every due scheduled pipeline once across processes. */
  async runDue(): Promise<number> {
    const now = this.now();
    let ran = 0;
    for (const row of await dueScheduledPipelines(this.deps.db.kysely, now, 100)) {
      const { trigger } = stored(row);
      if (trigger.kind !== 'SCHEDULE' || row.nextRunAt === null) continue;
      const next = Math.max(row.nextRunAt + trigger.everyMinutes * MINUTE_MS, now + MINUTE_MS);
      const claimed = await this.deps.db.transaction((tx) =>
        claimScheduledRun(tx.db, row.id, row.nextRunAt as number, next),
      );
      if (!claimed) continue;
      await this.run(row, { conversationId: null, vars: {} });
      ran++;
    }
    return ran;
  }

  /**
   * One run: the rate cap, then each step as PIPELINE for the owner, checked at this moment. A
   * step refused for want of a capability stops the pipeline and records why.
   */
  async run(
    row: CommandPipelineTable,
    trigger: { conversationId: string | null; vars: Record<string, string> },
  ): Promise<'ran' | 'capped' | 'stopped' | 'failed'> {
    const now = this.now();
    if (!(await this.takeRun(row, now))) {
      this.deps.log.info({ pipelineId: row.id }, 'pipeline run skipped: over its hourly run cap');
      return 'capped';
    }
    const owner = await findAccountById(this.deps.db.kysely, row.ownerId);
    if (!owner || owner.deletedAt !== null) {
      await this.stop(row, 'its owner no longer exists');
      return 'stopped';
    }
    const person = personWithoutSession(owner);
    const { channelId } = stored(row);
    const conversationId = trigger.conversationId ?? channelId;
    const context = { serverId: row.workspaceId, conversationId };
    const steps = JSON.parse(row.steps) as MacroStep[];
    const extra = { pipelineId: row.id };
    for (const step of steps) {
      const input = { command: step.command, args: expand(step.args, trigger.vars), context };
      const key = conversationId ? `${conversationId}\n${owner.id}` : null;
      if (key) this.posting.set(key, (this.posting.get(key) ?? 0) + 1);
      try {
        const prepared = await this.deps.commands.prepare(person, 'PIPELINE', input);
        await this.deps.commands.perform(prepared, { confirmation: null, pipelineId: row.id });
      } catch (err) {
        await this.deps.commands.auditRefusal(person, 'PIPELINE', input, null, err, extra);
        if (!(err instanceof AppError)) throw err;
        if (err.code === 'FORBIDDEN' || err.code === 'NOT_FOUND') {
          await this.stop(row, `its owner may no longer run /${step.command}: ${err.message}`);
          return 'stopped';
        }
        this.deps.log.info({ pipelineId: row.id, code: err.code }, 'pipeline step failed');
        return 'failed';
      } finally {
        if (key) {
          const n = (this.posting.get(key) ?? 1) - 1;
          if (n <= 0) this.posting.delete(key);
          else this.posting.set(key, n);
        }
      }
    }
    return 'ran';
  }

  /** Counts a run against the hourly cap (a compare-and-set, so processes share the count). */
  private async takeRun(row: CommandPipelineTable, now: number): Promise<boolean> {
    return this.deps.db.transaction(async (tx) => {
      const fresh = await findPipeline(tx.db, row.id);
      if (!fresh || fresh.enabled !== 1) return false;
      const newWindow = now - Number(fresh.windowStart) >= HOUR_MS;
      const runs = newWindow ? 0 : fresh.windowRuns;
      if (runs >= PIPELINE_RUNS_PER_HOUR) return false;
      return countPipelineRun(tx.db, fresh, {
        windowStart: newWindow ? now : fresh.windowStart,
        windowRuns: runs + 1,
        lastRunAt: now,
      });
    });
  }

  private async stop(row: CommandPipelineTable, reason: string): Promise<void> {
    this.deps.log.info({ pipelineId: row.id, reason }, 'pipeline stopped');
    await this.deps.db.transaction(async (tx) => {
      await updatePipeline(tx.db, row.id, { enabled: 0, stoppedReason: reason });
      this.listening.invalidateOnCommit(tx, row.workspaceId);
    });
  }
}

function stored(row: CommandPipelineTable): Stored {
  return JSON.parse(row.trigger) as Stored;
}

function toView(row: CommandPipelineTable): PipelineView {
  const s = stored(row);
  return {
    id: row.id,
    serverId: row.workspaceId,
    ownerId: row.ownerId,
    name: row.name,
    enabled: row.enabled === 1,
    trigger: s.trigger,
    channelId: s.channelId,
    steps: JSON.parse(row.steps) as MacroStep[],
    stoppedReason: row.stoppedReason,
    lastRunAt: row.lastRunAt === null ? null : Number(row.lastRunAt),
    nextRunAt: row.nextRunAt === null ? null : Number(row.nextRunAt),
    createdAt: Number(row.createdAt),
  };
}

function checkTrigger(input: unknown): Trigger {
  const t = (input ?? {}) as Record<string, unknown>;
  switch (t.kind) {
    case 'MESSAGE': {
      const pattern = compilePattern(t.pattern).source;
      const ids = t.channelIds ?? [];
      if (
        !Array.isArray(ids) ||
        ids.length > 50 ||
        ids.some((x) => typeof x !== 'string' || !isId(x))
      ) {
        throw validation('trigger.channelIds: at most 50 channel ids', {
          argument: 'trigger.channelIds',
        });
      }
      return { kind: 'MESSAGE', pattern, channelIds: [...new Set(ids as string[])] };
    }
    case 'MEMBER_JOINED':
      return { kind: 'MEMBER_JOINED' };
    case 'SCHEDULE': {
      const every = t.everyMinutes;
      if (
        typeof every !== 'number' ||
        !Number.isInteger(every) ||
        every < SCHEDULE_MIN_MINUTES ||
        every > SCHEDULE_MAX_MINUTES
      ) {
        throw validation(
          `trigger.everyMinutes: a whole number from ${SCHEDULE_MIN_MINUTES} to ${SCHEDULE_MAX_MINUTES}`,
          { argument: 'trigger.everyMinutes' },
        );
      }
      return { kind: 'SCHEDULE', everyMinutes: every };
    }
    default:
      throw validation('trigger.kind: MESSAGE, MEMBER_JOINED or SCHEDULE', {
        argument: 'trigger.kind',
      });
  }
}
