import { DAY_MS, MINUTE_MS } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { ChannelService } from '../channels/index.js';
import type { IpBlockService } from '../ip-blocks/index.js';
import type { MessageService } from '../messages/index.js';
import type { ModerationService } from '../moderation/index.js';
import type { PresenceService } from '../presence/index.js';
import { TIMEOUT_MAX_MINUTES, type WorkspaceService } from '../workspaces/index.js';
import type { Db } from '../../db/database.js';

import { insertReminder } from './queries.js';
import {
  BUILTIN_SOURCE,
  type ArgDef,
  type Args,
  type BuiltinCall,
  type CommandDef,
  type Surface,
} from './types.js';

/** The services built-ins call: each the same method (so the same checks) as its mutation. */
export interface BuiltinServices {
  db: Db;
  channels: ChannelService;
  messages: MessageService;
  workspaces: WorkspaceService;
  presence: PresenceService;
  moderation: ModerationService;
  ipBlocks: IpBlockService;
}

const EVERYWHERE: readonly Surface[] = ['MESSAGE_BOX', 'PALETTE', 'AI'];
const NOT_AI: readonly Surface[] = ['MESSAGE_BOX', 'PALETTE'];

const arg = (
  name: string,
  type: ArgDef['type'],
  description: string,
  more: Partial<ArgDef> = {},
): ArgDef => ({ name, type, description, required: true, ...more });

const str = (args: Args, name: string) => (args[name] === null ? '' : String(args[name] ?? ''));
const conversation = (call: BuiltinCall) => call.context.conversationId as string;
const workspace = (call: BuiltinCall) => call.context.workspaceId as string;

type Spec = Omit<CommandDef, 'source' | 'needsWorkspace' | 'needsConversation'> &
  Partial<Pick<CommandDef, 'needsWorkspace' | 'needsConversation'>>;

function def(spec: Spec): CommandDef {
  return {
    needsWorkspace: true,
    needsConversation: false,
    ...spec,
    source: BUILTIN_SOURCE,
  };
}

type OperatorFields =
  | 'capability'
  | 'actions'
  | 'surfaces'
  | 'needsWorkspace'
  | 'nlDescription'
  | 'intentSamples'
  | 'aiCallable';

/** An operator-only built-in: the instance capability, anywhere, never offered to the AI. */
function operatorCommand(spec: Omit<Spec, OperatorFields>): CommandDef {
  return def({
    capability: 'instance:operator',
    actions: [],
    surfaces: NOT_AI,
    needsWorkspace: false,
    nlDescription: null,
    intentSamples: [],
    aiCallable: false,
    ...spec,
  });
}

/** Reminders: 1 minute to a year ahead. */
export const REMIND_MAX_MS = 365 * DAY_MS;

/** `10m`, `2h`, `3d`, `1w` (also `minutes`, `hours`, ...) as milliseconds, or null. */
export function parseDuration(input: string): number | null {
  const m = /^\s*(\d{1,6})\s*(m|min|mins|minutes?|h|hrs?|hours?|d|days?|w|weeks?)\s*$/i.exec(input);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = m[2]!.toLowerCase()[0];
  const per =
    unit === 'm' ? MINUTE_MS : unit === 'h' ? 60 * MINUTE_MS : unit === 'd' ? DAY_MS : 7 * DAY_MS;
  return n * per;
}

/** Every built-in command (docs/commands.md lists them with their capability). */
export function builtinCommands(s: BuiltinServices): CommandDef[] {
  const post = async (call: BuiltinCall, text: string) => {
    const message = await s.messages.sending.send(call.actor, {
      conversationId: conversation(call),
      text,
    });
    return { message: 'sent', messageId: message.id };
  };
  return [
    def({
      name: 'me',
      description: 'Posts an action about yourself, in italics.',
      args: [arg('text', 'text', 'what you do', { maxLength: 4000 })],
      capability: 'message:post',
      actions: ['message:post'],
      surfaces: EVERYWHERE,
      destructive: false,
      needsConversation: true,
      nlDescription:
        'Post a third-person action message ("/me waves") in the current conversation.',
      intentSamples: ['say that I wave', 'post an emote', 'describe what I am doing'],
      aiCallable: true,
      run: (call) => post(call, `_${str(call.args, 'text')}_`),
    }),
    def({
      name: 'shrug',
      description: 'Posts your message followed by ¯\\_(ツ)_/¯.',
      args: [arg('text', 'text', 'your message', { required: false, maxLength: 4000 })],
      capability: 'message:post',
      actions: ['message:post'],
      surfaces: EVERYWHERE,
      destructive: false,
      needsConversation: true,
      nlDescription: 'Post a message with a shrug emoticon appended.',
      intentSamples: ['shrug', 'post a shrug', 'say I do not know with a shrug'],
      aiCallable: true,
      run: (call) => post(call, `${str(call.args, 'text')} ¯\\_(ツ)_/¯`.trim()),
    }),
    def({
      name: 'topic',
      description: "Sets the channel's topic; empty clears it.",
      args: [arg('topic', 'text', 'the new topic', { required: false, maxLength: 250 })],
      capability: 'channel:update',
      actions: ['channel:update', 'channel:updateAny'],
      surfaces: EVERYWHERE,
      destructive: false,
      needsConversation: true,
      channelOnly: true,
      nlDescription: 'Set or clear the topic of the current channel.',
      intentSamples: [
        'change the channel topic',
        'set topic to release planning',
        'clear the topic',
      ],
      aiCallable: true,
      run: async (call) => {
        const row = await s.channels.setTopic(
          call.actor,
          conversation(call),
          call.args.topic ?? null,
        );
        return { message: row.topic ? `topic set to "${row.topic}"` : 'topic cleared' };
      },
    }),
    def({
      name: 'rename',
      description: 'Renames the channel.',
      args: [arg('name', 'string', 'the new channel name', { maxLength: 80 })],
      capability: 'channel:update',
      actions: ['channel:update', 'channel:updateAny'],
      surfaces: EVERYWHERE,
      destructive: false,
      needsConversation: true,
      channelOnly: true,
      nlDescription: 'Rename the current channel.',
      intentSamples: ['rename this channel', 'call this channel design', 'change the channel name'],
      aiCallable: true,
      run: async (call) => {
        const row = await s.channels.rename(call.actor, conversation(call), call.args.name);
        return { message: `channel renamed to #${row.name ?? ''}` };
      },
    }),
    def({
      name: 'invite',
      description: 'Adds a member of the workspace to the channel.',
      args: [arg('user', 'user', 'who to add (@username)')],
      capability: 'channel:addMember',
      actions: ['channel:addMember', 'channel:updateAny', 'channel:addGuest'],
      surfaces: EVERYWHERE,
      destructive: false,
      needsConversation: true,
      channelOnly: true,
      nlDescription: 'Add a workspace member to the current channel.',
      intentSamples: [
        'add alice to this channel',
        'invite bob here',
        'bring someone into the channel',
      ],
      aiCallable: true,
      run: async (call) => {
        await s.channels.addMembers(call.actor, conversation(call), [str(call.args, 'user')]);
        return { message: 'added to the channel' };
      },
    }),
    def({
      name: 'kick',
      description: 'Removes a member from the workspace (they may rejoin with a new invite).',
      args: [arg('user', 'user', 'who to remove (@username)')],
      capability: 'member:remove',
      actions: ['member:remove'],
      surfaces: EVERYWHERE,
      destructive: true,
      nlDescription: 'Remove a member from the workspace.',
      intentSamples: ['kick bob', 'remove this user from the workspace', 'ban someone from here'],
      aiCallable: true,
      describe: (args, l) => `remove ${l.user ?? String(args.user)} from this workspace`,
      run: async (call) => {
        await s.workspaces.members.removeMember(
          call.actor,
          workspace(call),
          str(call.args, 'user'),
        );
        return { message: 'member removed' };
      },
    }),
    def({
      name: 'timeout',
      description: 'Times a member out: they cannot write in the workspace until it ends.',
      args: [
        arg('user', 'user', 'who (@username)'),
        arg('duration', 'duration', 'how long (10m, 2h, 1d; at most 28 days)', {
          min: MINUTE_MS,
          max: TIMEOUT_MAX_MINUTES * MINUTE_MS,
        }),
      ],
      capability: 'member:timeout',
      actions: ['member:timeout'],
      surfaces: EVERYWHERE,
      destructive: true,
      nlDescription: 'Temporarily stop a member from writing in the workspace.',
      intentSamples: ['mute bob for an hour', 'time out this user', 'silence someone for a day'],
      aiCallable: true,
      describe: (args, l) =>
        `time out ${l.user ?? String(args.user)} for ${Math.round(Number(args.duration) / MINUTE_MS)} minutes`,
      run: async (call) => {
        const minutes = Math.max(1, Math.round(Number(call.args.duration) / MINUTE_MS));
        await s.workspaces.members.timeoutMember(
          call.actor,
          workspace(call),
          str(call.args, 'user'),
          minutes,
        );
        return { message: `timed out for ${minutes} minutes` };
      },
    }),
    def({
      name: 'archive',
      description: 'Archives the channel: it becomes read-only for everyone.',
      args: [],
      capability: 'channel:archive',
      actions: ['channel:archive'],
      surfaces: EVERYWHERE,
      destructive: true,
      needsConversation: true,
      channelOnly: true,
      nlDescription: 'Archive the current channel so nobody can post in it.',
      intentSamples: ['archive this channel', 'close the channel', 'make the channel read-only'],
      aiCallable: true,
      describe: (_args, l) =>
        `archive ${l.channel ?? 'this channel'}: nobody will be able to post in it until it is unarchived`,
      run: async (call) => {
        await s.channels.archive(call.actor, conversation(call));
        return { message: 'channel archived' };
      },
    }),
    def({
      name: 'pin',
      description: 'Pins a message of the conversation.',
      args: [arg('message', 'message', 'the id of the message to pin')],
      capability: 'message:pin',
      actions: ['message:pin'],
      surfaces: EVERYWHERE,
      destructive: false,
      needsConversation: true,
      nlDescription: 'Pin a message in the current conversation.',
      intentSamples: ['pin that message', 'pin this', 'keep this message at the top'],
      aiCallable: true,
      run: async (call) => {
        await s.messages.reactions.pin(call.actor, str(call.args, 'message'));
        return { message: 'message pinned' };
      },
    }),
    def({
      name: 'leave',
      description: 'Leaves the channel.',
      args: [],
      capability: 'workspace:read',
      actions: ['workspace:read'],
      surfaces: EVERYWHERE,
      destructive: false,
      needsConversation: true,
      channelOnly: true,
      nlDescription: 'Leave the current channel.',
      intentSamples: ['leave this channel', 'get me out of here', 'exit the channel'],
      aiCallable: true,
      run: async (call) => {
        await s.channels.leave(call.actor, conversation(call));
        return { message: 'you left the channel' };
      },
    }),
    def({
      name: 'away',
      description: 'Shows you as away; `/away off` shows your real status again.',
      args: [arg('state', 'string', '"off" to stop being away', { required: false, maxLength: 8 })],
      capability: 'self',
      actions: [],
      surfaces: EVERYWHERE,
      destructive: false,
      needsWorkspace: false,
      nlDescription: 'Set my presence to away, or back to automatic.',
      intentSamples: ['set me as away', 'I am stepping out', 'mark me back online'],
      aiCallable: true,
      run: async (call) => {
        const off = str(call.args, 'state').toLowerCase() === 'off';
        await s.presence.setChoice(call.actor, off ? 'auto' : 'away');
        return { message: off ? 'you are back' : 'you are away' };
      },
    }),
    def({
      name: 'remind',
      description: 'Posts a reminder in this conversation at a later time (10m, 2h, 1d, 1w).',
      args: [
        arg('in', 'duration', 'when, from now (1 minute to 365 days)', {
          min: MINUTE_MS,
          max: REMIND_MAX_MS,
        }),
        arg('text', 'text', 'what to be reminded of', { maxLength: 1000 }),
      ],
      capability: 'message:post',
      actions: ['message:post'],
      surfaces: EVERYWHERE,
      destructive: false,
      needsConversation: true,
      nlDescription: 'Schedule a reminder message in the current conversation after a delay.',
      intentSamples: [
        'remind me in 10 minutes to call Sam',
        'set a reminder for tomorrow',
        'remind us in an hour',
      ],
      aiCallable: true,
      run: async (call) => {
        const dueAt = call.now + Number(call.args.in);
        await s.db.transaction((tx) =>
          insertReminder(tx.db, {
            id: newId(),
            accountId: call.person.accountId,
            workspaceId: workspace(call),
            conversationId: conversation(call),
            text: str(call.args, 'text'),
            dueAt,
            createdAt: call.now,
          }),
        );
        return { message: `reminder set for ${new Date(dueAt).toISOString()}` };
      },
    }),
    // The moderation an instance operator has on the command line (`svc principal`, `svc ip`,
    // `svc abuse-reports`): the same service calls, so an agent, a pipeline or a bot acting for an
    // operator is refused like anyone else (assertInstanceOperator).
    operatorCommand({
      name: 'block-principal',
      description: 'Blocks a principal on the instance (user:@name, key:<id>, server:<host>).',
      args: [
        arg('principal', 'string', 'the principal id', { maxLength: 300 }),
        arg('reason', 'text', 'why', { required: false, maxLength: 500 }),
        arg('cascade', 'boolean', 'also remove what it posted and the workspaces it owns', {
          required: false,
        }),
      ],
      destructive: true,
      describe: (args) =>
        `block ${String(args.principal)} on this instance` +
        (args.cascade === true ? ', removing what it posted and the workspaces it owns' : ''),
      run: async (call) => {
        await s.moderation.blocks.block(call.actor, {
          principalId: call.args.principal,
          reason: call.args.reason,
          cascade: call.args.cascade === true,
        });
        return { message: `${String(call.args.principal)} blocked` };
      },
    }),
    operatorCommand({
      name: 'unblock-principal',
      description: 'Lifts a principal block.',
      args: [arg('principal', 'string', 'the principal id', { maxLength: 300 })],
      destructive: false,
      run: async (call) => {
        await s.moderation.blocks.unblock(call.actor, call.args.principal);
        return { message: `${String(call.args.principal)} unblocked` };
      },
    }),
    operatorCommand({
      name: 'ip-block',
      description: 'Blocks an address or range on every route.',
      args: [
        arg('cidr', 'string', 'address or CIDR range', { maxLength: 64 }),
        arg('reason', 'text', 'why', { required: false, maxLength: 500 }),
        arg('days', 'integer', 'lift it after this many days', {
          required: false,
          min: 1,
          max: 36500,
        }),
      ],
      destructive: true,
      describe: (args) => `refuse every request from ${String(args.cidr)}`,
      run: async (call) => {
        await s.ipBlocks.block(call.actor, {
          cidr: str(call.args, 'cidr'),
          reason: call.args.reason === null ? null : String(call.args.reason ?? '') || null,
          expiresInDays: call.args.days === null ? null : (call.args.days as number | undefined),
        });
        return { message: `${String(call.args.cidr)} blocked` };
      },
    }),
    operatorCommand({
      name: 'ip-unblock',
      description: 'Lifts an address block.',
      args: [arg('cidr', 'string', 'address or CIDR range', { maxLength: 64 })],
      destructive: false,
      run: async (call) => {
        await s.ipBlocks.unblock(call.actor, str(call.args, 'cidr'));
        return { message: `${String(call.args.cidr)} unblocked` };
      },
    }),
    operatorCommand({
      name: 'resolve-report',
      description: 'Marks an abuse report resolved for the instance.',
      args: [arg('report', 'string', 'the report id', { maxLength: 64 })],
      destructive: false,
      run: async (call) => {
        await s.moderation.reports.resolveInstance(call.actor, call.args.report);
        return { message: 'report resolved' };
      },
    }),
  ];
}
