import type { Agent, TestApp } from '../_util/app.js';
import { rootDescriptions } from '../_util/described-refusals.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, inviteAndJoin, ok } from '../workspaces/_helpers.js';

/** What the described-refusals tests of the root fields ask about. */
export interface DescribedWorld {
  owner: Agent;
  /** A member of the owner's workspace. */
  member: Agent;
  /** In no workspace of the others. */
  outsider: Agent;
  serverId: string;
  /** The owner's direct space. */
  direct: string;
  /** The workspace's #general. */
  general: string;
  /** A message of the owner's in #general. */
  mine: string;
  /** A deleted message of the owner's in #general. */
  gone: string;
  descriptions: Map<string, string>;
}

/** A workspace with an owner and a member, an outsider, and two messages (one deleted). */
export async function describedWorld(t: TestApp): Promise<DescribedWorld> {
  const owner = await signUpAndIn(t);
  const member = await signUpAndIn(t);
  const outsider = await signUpAndIn(t);
  const serverId = (await createWorkspace(t, owner, 'described')).id as string;
  await inviteAndJoin(t, owner, serverId, [member]);
  const spaces = ok(await t.gql('{ myWorkspaces { id isDirect } }', {}, owner)).myWorkspaces;
  const direct = spaces.find((w: { isDirect: boolean }) => w.isDirect).id as string;
  const chans = ok(
    await t.gql('query($s: ID!) { channels(serverId: $s) { id name } }', { s: serverId }, owner),
  ).channels as Array<{ id: string; name: string }>;
  const general = chans.find((c) => c.name === 'general')!.id;
  const send = async (text: string) =>
    ok(
      await t.gql(
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
        { i: { conversationId: general, text } },
        owner,
      ),
    ).sendMessage.id as string;
  const mine = await send('kept');
  const gone = await send('deleted');
  ok(await t.gql('mutation($m: ID!) { deleteMessage(messageId: $m) { id } }', { m: gone }, owner));
  const descriptions = await rootDescriptions(t, owner);
  return { owner, member, outsider, serverId, direct, general, mine, gone, descriptions };
}
