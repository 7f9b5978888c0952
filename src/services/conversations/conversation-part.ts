import type { Logger } from 'pino';

import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { EventBus } from '../../events/bus.js';
import type { Clock } from '../../lib/clock.js';
import type { DmService } from '../dm/dm-service.js';

/** What the conversations area is built from (context.ts). */
export interface ConversationServiceDeps {
  db: Db;
  bus: EventBus;
  config: Config;
  clock: Clock;
  log: Logger;
  dm: DmService;
}

/** A part of the conversations area: its dependencies and two shorthands. */
export abstract class ConversationPart {
  constructor(protected readonly deps: ConversationServiceDeps) {}

  protected get kysely() {
    return this.deps.db.kysely;
  }

  protected now(): number {
    return this.deps.clock.now().getTime();
  }
}
