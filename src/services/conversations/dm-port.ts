import type { Executor } from '../../db/database.js';
import type { DmRequestTable } from '../../db/tables/dm.js';
import type { Tx } from '../../db/transaction.js';

/** A person named in a create or add, as the reach rules need them. */
export interface Person {
  id: string;
  username: string;
  homeServer: string | null;
  createdAt: number;
}

/** How the caller may reach one person: a conversation at once, or only a DM request. */
export type Reach = 'direct' | 'request';

/**
 * A DM request as the dm area answers it: a request to talk in a DIRECT conversation, from
 * `fromId` to `toId`, its stored columns as they stand. Declared with the port, which both areas
 * read (the dm area's surface exports it as its view; this area cannot import that area).
 */
export type DmRequestView = Pick<
  DmRequestTable,
  'id' | 'fromId' | 'toId' | 'conversationId' | 'state' | 'createdAt' | 'respondedAt'
>;

/** The DIRECT conversation a request or an answer is about. */
export interface DirectConversation {
  id: string;
  workspaceId: string;
  kind: 'channel' | 'direct' | 'group';
  isPrivate: number;
}

/**
 * What starting and reading conversations ask of the DM rules (settings, blocks, requests):
 * dm/dm-service.ts, handed in by build-services.ts. A port rather than an import, because the
 * dm area adds people to conversations and announces it through this area's events; the dm
 * area imports conversations, not the other way round.
 */
export interface DirectMessaging {
  /** Whether the account has a device set up for encryption. */
  hasDevice(accountId: string): Promise<boolean>;
  /** How the caller may reach each person; FORBIDDEN for anyone they may not reach at all. */
  reach(db: Executor, caller: Person, people: readonly Person[]): Promise<Map<string, Reach>>;
  /** May the caller send one more DM request now (probation, the daily limit). */
  assertMayRequest(db: Executor, caller: Person): Promise<void>;
  /** Records a request and tells the recipient, after commit. */
  createRequest(
    tx: Tx,
    fromId: string,
    toId: string,
    conversationId: string,
    now: number,
  ): Promise<DmRequestView>;
  /** Accepts the pending request `fromId` sent `toId` in the conversation, if there is one. */
  acceptPendingFrom(
    tx: Tx,
    conv: DirectConversation,
    fromId: string,
    toId: string,
    now: number,
  ): Promise<void>;
  /** Adds `joinerId` to a DIRECT conversation `otherId` is in, and announces it to both. */
  joinDirect(
    tx: Tx,
    conv: DirectConversation,
    otherId: string,
    joinerId: string,
    now: number,
  ): Promise<void>;
  /** The DM requests of these conversations. */
  requestsFor(conversationIds: readonly string[]): Promise<DmRequestView[]>;
}
