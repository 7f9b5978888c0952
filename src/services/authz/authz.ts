import { personOf, type Actor, type UserActor } from '../../auth/actor.js';
import { can as roleCan, type Action, type Role } from '../../auth/policy.js';
import type { Db, Executor } from '../../db/database.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import { AppError, notFound } from '../../errors.js';
import { isId } from '../../lib/ids.js';
import type { Membership } from './write-rules.js';

/** Where an action is taken; today every scoped action lives in a workspace. */
export interface AuthzScope {
  workspaceId: string;
  /**
   * Read inside this transaction instead of the request's memo (and refresh the memo): writes
   * check the membership they lock, so a concurrent change cannot slip between check and write.
   */
  db?: Executor;
}

type Memo = Map<string, Promise<Membership | null>>;

/**
 * Reads an account's membership row in a workspace: the workspaces area's `findMember`, handed
 * over by the root (build-services.ts) so that Authz, which every area asks, imports no area.
 */
export type MemberReader = (
  db: Executor,
  workspaceId: string,
  accountId: string,
) => Promise<Membership | undefined>;

/**
 * A fact about the actor that the request read early, before any service asked (a typed key of
 * `prime`/`primed`). The area that reads the fact declares its key; `Authz` only holds the value.
 */
export class PrimedFact<T> {
  declare private readonly type: T;
  constructor(readonly name: string) {}
}

/**
 * Authorization over the action catalogue of `auth/policy.ts`. The actor's membership in a
 * workspace is loaded once per request: the memo hangs off the person's actor object, which a
 * request builds once (`requireActor`), so it lives exactly as long as the request and needs no
 * clean-up. A service that changes the actor's own membership calls `forget`.
 *
 * The command line and remote servers hold no workspace role: `can` answers false for them
 * (the command line acts through its own service methods). A delegated actor may take an action
 * only when its grant names it and the person's role allows it.
 */
export class Authz {
  private readonly memos = new WeakMap<object, Memo>();
  private readonly primedFacts = new WeakMap<object, Map<PrimedFact<unknown>, unknown>>();

  constructor(
    private readonly db: Db,
    private readonly findMember: MemberReader,
  ) {}

  /** The actor's membership in a workspace, or null (no person, not a member, no workspace). */
  membership(actor: Actor, scope: AuthzScope): Promise<Membership | null> {
    const person = personOf(actor);
    if (!person) return Promise.resolve(null);
    let memo = this.memos.get(person);
    if (!memo) this.memos.set(person, (memo = new Map()));
    const hit = scope.db ? undefined : memo.get(scope.workspaceId);
    if (hit) return hit;
    const loaded = this.load(scope.db ?? this.db.kysely, scope.workspaceId, person.accountId);
    memo.set(scope.workspaceId, loaded);
    // A failed read is not remembered: the next call asks the database again.
    loaded.catch(() => {
      if (memo.get(scope.workspaceId) === loaded) memo.delete(scope.workspaceId);
    });
    return loaded;
  }

  /** The actor's membership, or NOT_FOUND (a workspace's existence is never revealed). */
  async requireMember(actor: Actor, scope: AuthzScope): Promise<Membership> {
    const m = await this.membership(actor, scope);
    if (!m) throw notFound('workspace');
    return m;
  }

  /** The actor's role in a workspace, or null. */
  async role(actor: Actor, scope: AuthzScope): Promise<Role | null> {
    return (await this.membership(actor, scope))?.role ?? null;
  }

  /** Whether the actor may take the action in the workspace (for fields that resolve to null). */
  async can(actor: Actor, action: Action, scope: AuthzScope): Promise<boolean> {
    if (!grantAllows(actor, action)) return false;
    return roleCan(await this.role(actor, scope), action);
  }

  /**
   * The actor's membership when it may take the action: NOT_FOUND for a non-member (a
   * workspace's existence is never revealed), FORBIDDEN for a member whose role may not.
   */
  async assertCan(actor: Actor, action: Action, scope: AuthzScope): Promise<Membership> {
    const m = await this.requireMember(actor, scope);
    if (!grantAllows(actor, action) || !roleCan(m.role, action)) {
      throw new AppError('FORBIDDEN', `your role in this workspace may not do this (${action})`);
    }
    return m;
  }

  /**
   * Puts a fact the request read early into the actor's memo (the GraphQL route reads the
   * caller's access to the conversation an operation names together with the session:
   * conversations/prefetched-access.ts). Like the memberships, it lives as long as the actor.
   */
  prime<T>(actor: UserActor, fact: PrimedFact<T>, value: T): void {
    let facts = this.primedFacts.get(actor);
    if (!facts) this.primedFacts.set(actor, (facts = new Map()));
    facts.set(fact, value);
  }

  /**
   * A fact primed for this actor, or undefined. Only the person's own actor finds it: an agent,
   * plugin or pipeline acting for the person reads for itself.
   */
  primed<T>(actor: Actor, fact: PrimedFact<T>): T | undefined {
    if (actor.kind !== 'user') return undefined;
    return this.primedFacts.get(actor)?.get(fact) as T | undefined;
  }

  /** Drops what this request remembers of the actor's membership (after changing it). */
  forget(actor: Actor, workspaceId?: string): void {
    const person = personOf(actor);
    if (!person) return;
    if (workspaceId === undefined) this.memos.delete(person);
    else this.memos.get(person)?.delete(workspaceId);
  }

  private async load(db: Executor, workspaceId: string, accountId: string) {
    if (workspaceId === DIRECT_SPACE_ID) return { role: 'member' as const, timedOutUntil: null };
    if (!isId(workspaceId)) return null;
    const row = await this.findMember(db, workspaceId, accountId);
    return row ? { role: row.role, timedOutUntil: row.timedOutUntil } : null;
  }
}

function grantAllows(actor: Actor, action: Action): boolean {
  if (actor.kind === 'agent' || actor.kind === 'plugin' || actor.kind === 'pipeline') {
    return actor.grant.actions.includes(action);
  }
  return true;
}
