import type { Logger } from 'pino';

import type { Config } from '../config/index.js';
import type { Db } from '../db/database.js';
import type { EventPort } from '../events/port.js';
import type { Clock } from '../lib/clock.js';

/** What every area is built from (build-services.ts); an area's deps add what it calls. */
export interface AreaDeps {
  db: Db;
  /** Where the area's events are written and published after the commit (the outbox). */
  events: EventPort;
  config: Config;
  clock: Clock;
  log: Logger;
}

/**
 * A part of a split area (workspaces, conversations, MLS): the area's dependencies and two
 * shorthands. One base for every area, so a part reads the same wherever it lives.
 */
export abstract class AreaPart<D extends AreaDeps> {
  constructor(protected readonly deps: D) {}

  protected get kysely() {
    return this.deps.db.kysely;
  }

  protected now(): number {
    return this.deps.clock.now().getTime();
  }
}
