import type { Logger } from 'pino';

import type { EventBus } from '../../events/bus.js';
import type { EventPort } from '../../events/port.js';
import type { Config } from '../../config/index.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { Tx } from '../../db/transaction.js';
import type { Clock } from '../../lib/clock.js';
import type { Authz } from '../authz/index.js';
import type { AuditLog } from '../audit/index.js';
import type { PluginService } from '../plugins/index.js';

import { builtinCommands, type BuiltinServices } from './builtins.js';
import { CommandService } from './command-service.js';
import { Keybinds } from './keybinds.js';
import { Macros } from './macros.js';
import { Pipelines } from './pipelines.js';
import { deleteForAccount, deleteForWorkspace } from './queries.js';
import { CommandRegistry } from './registry.js';
import { Reminders } from './reminders.js';

export interface CommandSystemDeps extends BuiltinServices {
  config: Config;
  clock: Clock;
  log: Logger;
  authz: Authz;
  audit: AuditLog;
  plugins: Pick<PluginService, 'contributionsOf'>;
  bus: EventBus;
  /** Where the pipelines' cache writes its drops (the outbox). */
  events: EventPort;
}

/**
 * The command system (docs/commands.md): one object for the edges and the composition root over
 * its parts: the registry, runs (`run`), macros, keybinds, pipelines and reminders.
 */
export class CommandSystem {
  readonly registry: CommandRegistry;
  readonly run: CommandService;
  readonly macros: Macros;
  readonly keybinds: Keybinds;
  readonly pipelines: Pipelines;
  readonly reminders: Reminders;
  private readonly pipelineLog: Logger;

  constructor(deps: CommandSystemDeps) {
    this.pipelineLog = deps.log.child({ subsystem: 'pipelines' });
    this.registry = new CommandRegistry(builtinCommands(deps), deps.plugins);
    this.run = new CommandService({ ...deps, registry: this.registry });
    const parts = { ...deps, commands: this.run, registry: this.registry };
    this.macros = new Macros(parts);
    this.keybinds = new Keybinds(parts);
    this.pipelines = new Pipelines(parts);
    this.reminders = new Reminders(deps);
  }

  /**
   * Pipeline triggers after a message's commit and a member's join (wiring.ts registers them),
   * off the request path: a failure is logged.
   */
  readonly messageCreated = (m: MessageTable): void => {
    void this.pipelines.onMessage(m).catch(this.logTriggerFailure);
  };
  readonly memberJoined = (workspaceId: string, accountId: string): void => {
    void this.pipelines.onJoined(workspaceId, accountId).catch(this.logTriggerFailure);
  };

  /** Resolves when the pipeline triggers in flight have finished (closing waits for them). */
  idle(): Promise<void> {
    return this.pipelines.idle();
  }

  private readonly logTriggerFailure = (err: unknown): void => {
    this.pipelineLog.error({ err }, 'pipeline trigger failed');
  };

  /** Workspace deletion: its macros, keybinds, pipelines and reminders. */
  async onWorkspaceDeleted(tx: Tx, workspaceId: string): Promise<void> {
    await deleteForWorkspace(tx.db, workspaceId);
    this.pipelines.forgetOnCommit(tx, workspaceId);
  }

  /** Account purge: the person's macros, keybinds, reminders, pipelines and confirmations. */
  async onAccountPurged(tx: Tx, accountId: string): Promise<void> {
    await deleteForAccount(tx.db, accountId);
    this.pipelines.forgetOnCommit(tx);
  }
}
