import type { Logger } from 'pino';

import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { EventBus } from '../../events/bus.js';
import type { Clock } from '../../lib/clock.js';
import type { AccountService } from '../accounts/account-service.js';
import type { Authz } from '../authz/authz.js';

/** What the workspaces area is built from (context.ts). */
export interface WorkspaceServiceDeps {
  db: Db;
  bus: EventBus;
  config: Config;
  clock: Clock;
  log: Logger;
  accounts: AccountService;
  authz: Authz;
}

/** A part of the workspaces area: its dependencies and two shorthands. */
export abstract class WorkspacePart {
  constructor(protected readonly deps: WorkspaceServiceDeps) {}

  protected get kysely() {
    return this.deps.db.kysely;
  }

  protected now(): number {
    return this.deps.clock.now().getTime();
  }
}
