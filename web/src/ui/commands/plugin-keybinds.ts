import { signal } from '@preact/signals';

import { ApiError, gql } from '../../api/graphql.ts';
import { WORKSPACE_PLUGINS } from '../../api/plugin-queries.ts';
import type { Keybind, WorkspacePlugin } from '../../api/types.ts';
import { conversations, featureOn } from '../../state/store.ts';
import { openConversation } from '../../state/view.ts';

import { clashOf, MAC } from './chords.ts';
import { commandsHere, runCommand } from './run.ts';
import type { SlashTarget } from './slash.ts';

// The keybinds a workspace's enabled plugins contribute (docs/plugins.md, `contributes.keybinds`):
// bound while that workspace is on screen, as the person's own are, except a chord the browser
// or the app answers (never taken from them) and one a person's or workspace keybind already
// has (those win). Each runs its plugin's command as `KEYBIND`; one with arguments opens its
// form in the message box instead, filled by name there.

export interface PluginKeybind {
  chord: string;
  command: string;
  description: string | null;
  workspacePluginId: string;
  pluginName: string;
  /** Why it is not bound, in words; null when it is. */
  refused: string | null;
}

/** The plugin keybinds of the workspace on screen, bound or not (with the reason). */
export const pluginKeybinds = signal<PluginKeybind[]>([]);

/** A command's form the message box of that conversation should open (a plugin keybind's). */
export const formRequest = signal<{ conversationId: string; target: SlashTarget } | null>(null);

/**
 * A bundle's `keys` (`Mod+Shift+U`, modifiers in any order) as the app writes a chord: the
 * modifiers in the order Mod, Ctrl, Alt, Shift, Meta, and Ctrl (elsewhere) or Meta (on a Mac)
 * read as Mod, as a key press gives them (chords.ts).
 */
export function chordOfKeys(keys: string): string {
  const parts = keys.split('+');
  const key = parts.pop() ?? '';
  const mods = new Set(
    parts.map((m) => ((!MAC && m === 'Ctrl') || (MAC && m === 'Meta') ? 'Mod' : m)),
  );
  return [...['Mod', 'Ctrl', 'Alt', 'Shift', 'Meta'].filter((m) => mods.has(m)), key].join('+');
}

/** Reads the plugin keybinds of a workspace; `taken` are the chords keybinds already have. */
export async function loadPluginKeybinds(serverId: string | null, taken: Keybind[]): Promise<void> {
  if (!serverId || !featureOn('workspace_plugins')) {
    pluginKeybinds.value = [];
    return;
  }
  const list = (await gql<{ workspacePlugins: WorkspacePlugin[] }>(WORKSPACE_PLUGINS, { serverId }))
    .workspacePlugins;
  const out: PluginKeybind[] = [];
  const bound = new Set(taken.map((k) => k.chord));
  for (const p of list.filter((x) => x.enabled)) {
    for (const k of p.keybinds ?? []) {
      const chord = chordOfKeys(k.keys);
      const refused =
        clashOf(chord) ??
        (bound.has(chord) ? 'A keybind of yours or of this workspace has these keys.' : null);
      if (!refused) bound.add(chord);
      out.push({
        chord,
        command: k.command,
        description: k.description,
        workspacePluginId: p.id,
        pluginName: p.name,
        refused,
      });
    }
  }
  pluginKeybinds.value = out;
}

/** Runs a plugin keybind's command in the open conversation (its form when it takes arguments). */
export async function runPluginKeybind(k: PluginKeybind, serverId: string): Promise<void> {
  const conversationId = openConversation.peek();
  const c = conversationId ? conversations.peek()[conversationId] : undefined;
  if (c && c.serverId === serverId) {
    const cmd = (await commandsHere(c.id)).find(
      (x) => x.name === k.command && x.source.workspacePluginId === k.workspacePluginId,
    );
    if (!cmd) {
      throw new ApiError(
        `/${k.command} of ${k.pluginName} cannot be run here; it may have been disabled`,
        'VALIDATION',
      );
    }
    if (cmd.arguments.length) {
      formRequest.value = { conversationId: c.id, target: { kind: 'command', command: cmd } };
      return;
    }
  }
  await runCommand({
    command: k.command,
    plugin: k.workspacePluginId,
    args: {},
    context: c && c.serverId === serverId ? { serverId, conversationId: c.id } : { serverId },
    initiator: 'KEYBIND',
  });
}
