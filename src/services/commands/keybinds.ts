import type { UserActor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import type { CommandKeybindTable } from '../../db/tables/commands.js';
import { notFound, validation } from '../../errors.js';
import { workspaceTopic } from '../../events/catalog.js';
import type { EventPort } from '../../events/port.js';
import { emit } from '../../events/publish.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import type { Authz } from '../authz/index.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/index.js';

import { canonicalJson } from './args.js';
import type { CommandService } from './command-service.js';
import {
  countKeybinds,
  deleteKeybind,
  findKeybind,
  findMacro,
  keybindsOf,
  keybindsPage,
  upsertKeybind,
} from './queries.js';

/** Keybinds one person, or one workspace's defaults, may hold. */
export const KEYBINDS_MAX = 100;

const MODIFIERS = ['Mod', 'Ctrl', 'Alt', 'Shift', 'Meta'] as const;
const NAMED = [
  'Enter',
  'Escape',
  'Tab',
  'Space',
  'Backspace',
  'Delete',
  'ArrowUp',
  'ArrowDown',
  'ArrowLeft',
  'ArrowRight',
  'Slash',
  'Comma',
  'Period',
];

/**
 * A chord in canonical form: modifiers in the order Mod, Ctrl, Alt, Shift, Meta, then one key (a
 * letter or digit in upper case, F1-F12 or a named key). A chord without a modifier is refused
 * unless it is a function key: a bare letter would fire while typing.
 */
export function normalizeChord(input: unknown): string {
  const bad = (why: string) => validation(`chord: ${why}`, { argument: 'chord' });
  if (typeof input !== 'string' || input.length === 0 || input.length > 64) {
    throw bad('write it like Mod+Shift+K');
  }
  const parts = input.split('+').map((p) => p.trim());
  const key = parts.pop() ?? '';
  const mods = new Set<string>();
  for (const p of parts) {
    const m = MODIFIERS.find((x) => x.toLowerCase() === p.toLowerCase());
    if (!m) throw bad(`"${p}" is not a modifier (${MODIFIERS.join(', ')})`);
    if (mods.has(m)) throw bad(`${m} is named twice`);
    mods.add(m);
  }
  let k: string;
  if (/^[a-z0-9]$/i.test(key)) k = key.toUpperCase();
  else if (/^f([1-9]|1[0-2])$/i.test(key)) k = key.toUpperCase();
  else {
    const named = NAMED.find((n) => n.toLowerCase() === key.toLowerCase());
    if (!named)
      throw bad(`"${key}" is not a key (a letter, a digit, F1-F12 or ${NAMED.join(', ')})`);
    k = named;
  }
  if (mods.size === 0 && !/^F\d+$/.test(k)) {
    throw bad('add a modifier (Mod, Ctrl, Alt, Shift or Meta): a bare key fires while typing');
  }
  if (mods.size === 1 && mods.has('Shift') && /^[A-Z0-9]$/.test(k)) {
    throw bad('Shift with a letter or digit is typing; add another modifier');
  }
  return [...MODIFIERS.filter((m) => mods.has(m)), k].join('+');
}

export interface KeybindView {
  id: string;
  serverId: string | null;
  ownerId: string | null;
  chord: string;
  command: string | null;
  macroId: string | null;
  args: Record<string, unknown>;
  createdAt: number;
}

/**
 * Keybinds (docs/commands.md, "Keybinds"): a person's own, stored on the server so every device
 * has them, and a workspace's defaults set by its staff (`keybind:manage`); a person's chord
 * overrides a workspace default of the same chord in the client. A keybind only names what to
 * run: pressing it runs executeCommand or executeMacro with the KEYBIND initiator and every check.
 */
export class Keybinds {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      authz: Authz;
      commands: Pick<CommandService, 'assertKnown'>;
      events: EventPort;
    },
  ) {}

  async set(
    person: UserActor,
    input: {
      serverId?: unknown;
      chord: unknown;
      command?: unknown;
      macroId?: unknown;
      args?: unknown;
    },
  ): Promise<KeybindView> {
    const chord = normalizeChord(input.chord);
    const hasCommand = typeof input.command === 'string' && input.command !== '';
    const hasMacro = input.macroId !== undefined && input.macroId !== null;
    if (hasCommand === hasMacro) {
      throw validation('name either a command or a macro for the keybind', { argument: 'command' });
    }
    const command = hasCommand
      ? (input.command as string).trim().replace(/^\//, '').toLowerCase()
      : null;
    if (command !== null && !/^[a-z][a-z0-9-]{0,31}$/.test(command)) {
      throw validation('command: name a command', { argument: 'command' });
    }
    const args = input.args ?? {};
    if (
      typeof args !== 'object' ||
      args === null ||
      Array.isArray(args) ||
      canonicalJson(args).length > 4000
    ) {
      throw validation('args: an object of at most 4,000 characters', { argument: 'args' });
    }
    const serverId = input.serverId ?? null;
    const row: CommandKeybindTable = {
      id: newId(),
      workspaceId: null,
      ownerId: null,
      chord,
      command,
      macroId: null,
      args: JSON.stringify(args),
      createdAt: this.deps.clock.now().getTime(),
    };
    if (serverId !== null && (typeof serverId !== 'string' || !isId(serverId))) {
      throw notFound('workspace');
    }
    if (command !== null) {
      // Outside the transaction (the registry reads plugins on its own); a workspace's default is
      // checked against that workspace's commands only once the caller may set its defaults.
      if (serverId !== null) {
        await this.deps.authz.assertCan(person, 'keybind:manage', { workspaceId: serverId });
      }
      await this.deps.commands.assertKnown(person, serverId, command, null, 'command');
    }
    await this.deps.db.transaction(async (tx) => {
      if (serverId !== null) {
        await this.deps.authz.assertCan(person, 'keybind:manage', {
          workspaceId: serverId,
          db: tx.db,
        });
        row.workspaceId = serverId;
      } else {
        row.ownerId = person.accountId;
      }
      if (hasMacro) {
        const id = input.macroId;
        const macro = typeof id === 'string' && isId(id) ? await findMacro(tx.db, id) : undefined;
        const mine = macro && macro.ownerId === person.accountId;
        const shared = macro && macro.workspaceId !== null && macro.workspaceId === row.workspaceId;
        const usable =
          mine ||
          (macro?.workspaceId &&
            (shared ||
              (row.ownerId !== null &&
                (await this.deps.authz.membership(person, {
                  workspaceId: macro.workspaceId,
                  db: tx.db,
                })))));
        if (!macro || !usable) throw notFound('macro');
        row.macroId = macro.id;
      }
      const scope = row.ownerId
        ? { ownerId: row.ownerId }
        : { workspaceId: row.workspaceId as string };
      const existing = await keybindsOf(tx.db, scope);
      if (
        !existing.some((k) => k.chord === chord) &&
        (await countKeybinds(tx.db, scope)) >= KEYBINDS_MAX
      ) {
        throw validation(`limit reached: at most ${KEYBINDS_MAX} keybinds`, {
          limit: KEYBINDS_MAX,
        });
      }
      await upsertKeybind(tx.db, row);
      // A workspace's default reaches every member's open pages (docs/events.md).
      if (row.workspaceId !== null) {
        const serverId = row.workspaceId;
        emit(tx, this.deps.events, workspaceTopic(serverId), 'WorkspaceKeybindSet', row.createdAt, {
          audience: { kind: 'workspace' },
          serverId,
          keybindId: row.id,
          chord,
          replacedId: existing.find((k) => k.chord === chord)?.id ?? null,
          by: person.accountId,
        });
      }
    });
    return toView(row);
  }

  /** A page of the caller's keybinds, with the workspace's defaults when one is named. */
  async list(person: UserActor, serverId: unknown, args: KeysetArgs = {}): Promise<KeybindView[]> {
    const page = parseKeysetArgs(args, { max: 100, default: 100 });
    let workspaceId: string | null = null;
    if (serverId !== undefined && serverId !== null) {
      if (typeof serverId !== 'string' || !isId(serverId)) throw notFound('workspace');
      await this.deps.authz.requireMember(person, { workspaceId: serverId });
      workspaceId = serverId;
    }
    const rows = await keybindsPage(
      this.deps.db.kysely,
      { ownerId: person.accountId, workspaceId },
      page,
    );
    return keysetRows(rows, page).map(toView);
  }

  async delete(person: UserActor, id: unknown): Promise<boolean> {
    if (typeof id !== 'string' || !isId(id)) throw notFound('keybind');
    return this.deps.db.transaction(async (tx) => {
      const row = await findKeybind(tx.db, id);
      if (!row) throw notFound('keybind');
      if (row.ownerId !== null) {
        if (row.ownerId !== person.accountId) throw notFound('keybind');
      } else {
        const scope = { workspaceId: row.workspaceId as string, db: tx.db };
        if (!(await this.deps.authz.membership(person, scope))) throw notFound('keybind');
        await this.deps.authz.assertCan(person, 'keybind:manage', scope);
      }
      const deleted = await deleteKeybind(tx.db, id);
      if (deleted && row.workspaceId !== null) {
        const serverId = row.workspaceId;
        const at = this.deps.clock.now().getTime();
        emit(tx, this.deps.events, workspaceTopic(serverId), 'WorkspaceKeybindDeleted', at, {
          audience: { kind: 'workspace' },
          serverId,
          keybindId: row.id,
          chord: row.chord,
          by: person.accountId,
        });
      }
      return deleted;
    });
  }
}

function toView(row: CommandKeybindTable): KeybindView {
  return {
    id: row.id,
    serverId: row.workspaceId,
    ownerId: row.ownerId,
    chord: row.chord,
    command: row.command,
    macroId: row.macroId,
    args: JSON.parse(row.args) as Record<string, unknown>,
    createdAt: Number(row.createdAt),
  };
}
