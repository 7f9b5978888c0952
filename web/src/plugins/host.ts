import { ApiError, gql, PLUGIN_CODE } from '../api/graphql.ts';
import { WORKSPACE_PLUGINS } from '../api/plugin-queries.ts';
import { SEND } from '../api/queries.ts';
import type { CommandRun, Message, WorkspacePlugin } from '../api/types.ts';
import { conversations } from '../state/store.ts';
import { cachedConversation } from '../state/timeline.ts';

import { PluginError, PluginSandbox, type RunPlace } from './sandbox.ts';

// Running a plugin command's code once the server has answered CLIENT_ACTION (docs/plugins.md,
// "Where plugin code runs"): the registry entry says which bundle and settings, the bundle's
// entry file runs in a sandbox kept per entry while its bundle and settings stay the same, and
// what the plugin may do back (post a message as the person, say a reply) goes through here.

export interface PluginRunContext {
  serverId?: string;
  conversationId?: string;
}

interface Kept {
  key: string;
  box: PluginSandbox;
}

const running = new Map<string, Kept>();
/** Entry files by bundle sha256: a bundle's bytes never change. */
const entries = new Map<string, Promise<string>>();

function decode(file: { encoding: string; data: string }): string {
  if (file.encoding !== 'base64') return file.data;
  const bytes = Uint8Array.from(atob(file.data), (ch) => ch.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/** The bundle's `client.entry` file as text (the server checked the bundle at upload). */
function entryOf(serverId: string, sha256: string): Promise<string> {
  const had = entries.get(sha256);
  if (had) return had;
  const read = (async () => {
    const res = await fetch(
      `/api/plugin-bundles/${encodeURIComponent(serverId)}/${encodeURIComponent(sha256)}`,
      { credentials: 'same-origin' },
    );
    if (!res.ok) {
      throw new ApiError(
        `the plugin's bundle could not be read (${res.status}); reload and try again`,
        'NOT_FOUND',
      );
    }
    const bundle = (await res.json()) as {
      client: { entry: string; files: Record<string, { encoding: string; data: string }> };
    };
    const file = bundle.client.files[bundle.client.entry];
    if (!file) throw new ApiError('the plugin’s bundle has no entry file', 'VALIDATION');
    return decode(file);
  })();
  read.catch(() => entries.delete(sha256));
  entries.set(sha256, read);
  return read;
}

/** The channel a plugin names (`standup` or `#standup`), or the conversation of the run. */
function target(channel: string | null, context: RunPlace): string {
  if (channel === null) {
    if (!context.conversationId) {
      throw new PluginError('name a channel: this command was not run in a conversation');
    }
    return context.conversationId;
  }
  const name = channel.replace(/^#/, '').trim().toLowerCase();
  const hit = Object.values(conversations.peek()).find(
    (c) =>
      c.serverId === context.serverId &&
      c.kind === 'CHANNEL' &&
      c.isMember &&
      (c.name ?? '').toLowerCase() === name,
  );
  if (!hit) throw new PluginError(`you are in no channel #${name} of this workspace`);
  return hit.id;
}

async function post(channel: string | null, text: string, context: RunPlace) {
  const conversationId = target(channel, context);
  const c = conversations.peek()[conversationId];
  if (c?.encrypted) {
    // Its text would leave the browser unencrypted: plugins do not post there.
    throw new PluginError('a plugin does not post in an encrypted conversation');
  }
  const d = await gql<{ sendMessage: Message }>(SEND, {
    input: { conversationId, text, threadRootId: null },
  });
  cachedConversation(conversationId)?.add(d.sendMessage);
}

async function sandboxOf(entry: WorkspacePlugin, serverId: string): Promise<PluginSandbox> {
  const key = `${entry.bundleSha256}:${JSON.stringify(entry.settings)}`;
  const had = running.get(entry.id);
  if (had && had.key === key && had.box.alive) return had.box;
  had?.box.stop();
  const code = await entryOf(serverId, entry.bundleSha256);
  const box = new PluginSandbox({
    init: {
      code,
      plugin: { id: entry.pluginId, name: entry.name, version: entry.version },
      settings: entry.settings,
    },
    send: async (channel, text, place) => {
      if (!entry.capabilities.includes('messages:write')) {
        throw new PluginError('this plugin did not ask for messages:write');
      }
      await post(channel, text, place);
    },
  });
  running.set(entry.id, { key, box });
  return box;
}

/**
 * Runs the plugin's handler for a run the server answered CLIENT_ACTION; answers the reply the
 * handler returned (for the person only), or null.
 */
export async function runPluginAction(
  run: CommandRun,
  context: PluginRunContext,
): Promise<string | null> {
  const source = run.command.source;
  const serverId = context.serverId;
  if (!source?.workspacePluginId || !serverId) {
    throw new ApiError(`/${run.command.name} names no plugin of this workspace`, 'VALIDATION');
  }
  const list = (await gql<{ workspacePlugins: WorkspacePlugin[] }>(WORKSPACE_PLUGINS, { serverId }))
    .workspacePlugins;
  const entry = list.find((p) => p.id === source.workspacePluginId);
  if (!entry?.enabled) {
    throw new ApiError(
      `the plugin of /${run.command.name} was disabled or removed meanwhile`,
      'NOT_FOUND',
    );
  }
  try {
    const box = await sandboxOf(entry, serverId);
    return await box.invoke(run.args ?? {}, {
      command: run.command.name,
      serverId,
      conversationId: context.conversationId ?? null,
    });
  } catch (err) {
    if (err instanceof PluginError) throw new ApiError(err.message, PLUGIN_CODE);
    throw err;
  }
}
