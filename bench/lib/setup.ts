import { gql, signup, type Session } from './client.js';

export interface Space {
  serverId: string;
  channelId: string;
  owner: Session;
  members: Session[];
}

let seq = 0;
const uniq = () => `${Date.now().toString(36)}${(seq++).toString(36)}`;

/** A workspace with `memberCount` members (the owner included), all through the public API. */
export async function prepareWorkspace(
  base: string,
  memberCount: number,
  owner?: Session,
): Promise<Space> {
  const o = owner ?? (await signup(base, `own${uniq()}`));
  const ws = await gql(
    base,
    'mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { id channels { id name } } }',
    { i: { name: `bench ${uniq()}` } },
    o,
  );
  const serverId = ws.data.createWorkspace.id as string;
  const channelId = ws.data.createWorkspace.channels[0].id as string;
  const members: Session[] = [o];
  if (memberCount > 1) {
    const inv = await gql(
      base,
      'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token } }',
      { i: { serverId, maxUses: memberCount + 10 } },
      o,
    );
    const token = inv.data.createWorkspaceInvite.token as string;
    // Signups hash passwords (argon2id): a few at a time keeps preparation quick on 2 cores.
    const pending = Array.from({ length: memberCount - 1 }, (_, i) => i);
    while (pending.length) {
      const batch = pending.splice(0, 4);
      const joined = await Promise.all(
        batch.map(async () => {
          const s = await signup(base, `m${uniq()}`);
          await gql(
            base,
            'mutation($t: String!) { joinWorkspace(token: $t) { id } }',
            { t: token },
            s,
          );
          return s;
        }),
      );
      members.push(...joined);
    }
  }
  return { serverId, channelId, owner: o, members };
}

export const SUBSCRIPTION =
  'subscription($s: ID!) { workspaceEvents(serverId: $s) { type conversationId payload } }';
/** The same for a client that shows only its user's channels (`joinedChannelsOnly`). */
export const JOINED_SUBSCRIPTION =
  'subscription($s: ID!) { workspaceEvents(serverId: $s, joinedChannelsOnly: true) { type conversationId payload } }';
export const SEND = 'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }';
