import type { Config, DmPartners, DmReach } from '../../config/index.js';

// Direct-message reach rules (docs/direct-messages.md). Pure: they judge settings and a
// relationship; the service reads those from the database.

/** Loosest first: a later value is stricter. */
export const REACH_ORDER: readonly DmReach[] = ['anyone', 'shared_workspace', 'contacts'];
export const PARTNERS_ORDER: readonly DmPartners[] = ['any_server', 'this_server'];

export interface DmSettingsValue {
  inbound: DmReach;
  outbound: DmReach;
  partners: DmPartners;
}

/** How two people know each other, as seen from one of them. */
export interface Relationship {
  /** Either has blocked the other. */
  blocked: boolean;
  /** Both are members of a DIRECT conversation together. */
  contact: boolean;
  /** Both are members of a workspace (the direct space does not count). */
  sharedWorkspace: boolean;
}

const stricter = <T>(order: readonly T[], a: T, b: T): T =>
  order.indexOf(a) >= order.indexOf(b) ? a : b;

/** A user's settings, raised to the operator's floors (a floor raised after saving still binds). */
export function effectiveSettings(
  stored: DmSettingsValue | undefined,
  floors: Config['dm'],
): DmSettingsValue {
  if (!stored) return { ...floors };
  return {
    inbound: stricter(REACH_ORDER, stored.inbound, floors.inbound),
    outbound: stricter(REACH_ORDER, stored.outbound, floors.outbound),
    partners: stricter(PARTNERS_ORDER, stored.partners, floors.partners),
  };
}

/** Whether a reach setting lets a conversation start between people related so. */
export function reachAllows(reach: DmReach, rel: Relationship): boolean {
  if (rel.blocked) return false;
  if (reach === 'anyone') return true;
  if (reach === 'shared_workspace') return rel.contact || rel.sharedWorkspace;
  return rel.contact;
}

/** Neither a contact nor in a shared workspace: such a person only gets a DM request. */
export const isStranger = (rel: Relationship) => !rel.contact && !rel.sharedWorkspace;

/** Whether `value` is looser than `floor` in `order`. */
export const looserThan = <T>(order: readonly T[], value: T, floor: T) =>
  order.indexOf(value) < order.indexOf(floor);

export interface FloorNote {
  setting: 'INBOUND' | 'OUTBOUND' | 'PARTNERS';
  floor: string;
  excludedChoices: string[];
  variable: string;
  message: string;
}

const enumName = (v: string) => v.toUpperCase();

/** One note per setting whose floor excludes looser choices, for a client's greyed options. */
export function floorNotes(floors: Config['dm']): FloorNote[] {
  const notes: FloorNote[] = [];
  const add = <T extends string>(
    setting: FloorNote['setting'],
    order: readonly T[],
    floor: T,
    variable: string,
    what: string,
  ) => {
    const excluded = order.slice(0, order.indexOf(floor));
    if (excluded.length === 0) return;
    notes.push({
      setting,
      floor: enumName(floor),
      excludedChoices: excluded.map(enumName),
      variable,
      message: `This server's operator allows ${what} no looser than "${floor.replace('_', ' ')}" (${variable}).`,
    });
  };
  add('INBOUND', REACH_ORDER, floors.inbound, 'SVC_DM_INBOUND', 'who may message you');
  add('OUTBOUND', REACH_ORDER, floors.outbound, 'SVC_DM_OUTBOUND', 'whom you may message');
  add(
    'PARTNERS',
    PARTNERS_ORDER,
    floors.partners,
    'SVC_DM_PARTNERS',
    'which servers your conversation partners come from',
  );
  return notes;
}
