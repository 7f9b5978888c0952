import type { Logger } from 'pino';

import type { EventBus } from '../../events/bus.js';
import type { Config } from '../../config/index.js';
import type { Tx } from '../../db/transaction.js';
import type { Clock } from '../../lib/clock.js';
import type { AccountDeletionService } from '../account-deletion/account-deletion-service.js';
import type { Authz } from '../authz/authz.js';
import type { AuditLog } from '../moderation/audit-log.js';
import type { PluginService } from '../plugins/plugin-service.js';

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

  constructor(private readonly deps: CommandSystemDeps) {
    this.registry = new CommandRegistry(builtinCommands(deps), deps.plugins);
    this.run = new CommandService({ ...deps, registry: this.registry });
    const parts = { ...deps, commands: this.run, registry: this.registry };
    this.macros = new Macros(parts);
    this.keybinds = new Keybinds(parts);
    this.pipelines = new Pipelines(parts);
    this.reminders = new Reminders(deps);
  }

  /**
   * Registers the system on the areas it follows (the composition root calls it once): its rows
   * go with their workspace and with the account purge; pipeline triggers run after a message's
   * commit and a member's join, off the request path (a failure is logged); closing waits for
   * the triggers in flight.
   */
  attach(hooks: {
    accountDeletion: Pick<AccountDeletionService, 'addPurgeStep'>;
    onClose(fn: () => Promise<void>): void;
  }): void {
    const { messages, workspaces, log } = this.deps;
    workspaces.onDelete((tx, id) => this.onWorkspaceDeleted(tx, id));
    hooks.accountDeletion.addPurgeStep('commands', (tx, id) => this.onAccountPurged(tx, id));
    hooks.onClose(() => this.pipelines.idle());
    const pipelineLog = log.child({ subsystem: 'pipelines' });
    const logFailure = (err: unknown) => pipelineLog.error({ err }, 'pipeline trigger failed');
    messages.hooks.onCreated((m) => void this.pipelines.onMessage(m).catch(logFailure));
    workspaces.onJoined((w, a) => void this.pipelines.onJoined(w, a).catch(logFailure));
  }

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
