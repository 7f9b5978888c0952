import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';

import { ApiError } from '../../api/graphql.ts';
import { COMMAND_LIST_PAGE, KEYBINDS } from '../../api/command-queries.ts';
import { readAll } from '../../api/paged.ts';
import type { Keybind } from '../../api/types.ts';
import { commandListChanges } from '../../state/command-lists.ts';
import { pluginChanges } from '../../state/plugins.ts';
import { route } from '../../state/router.ts';
import { conversations, workspaces } from '../../state/store.ts';
import { lastServer, openConversation } from '../../state/view.ts';
import { showError } from '../toasts.tsx';

import { chordOf } from './chords.ts';
import { loadPluginKeybinds, pluginKeybinds, runPluginKeybind } from './plugin-keybinds.ts';
import { runCommand, runMacro } from './run.ts';
import { macrosHere } from './slash.ts';

// Keybinds run anywhere in the app (docs/commands.md): the person's own, and the defaults of
// the workspace on screen, a person's chord winning over a default of the same chord, and then
// the enabled plugins' keybinds of that workspace (plugin-keybinds.ts).

/** The keybinds in force: the person's and the current workspace's defaults. */
export const keybinds = signal<Keybind[]>([]);

function currentServer(): string | null {
  const r = route.peek();
  const id = r.name === 'workspace' ? r.serverId : lastServer.peek();
  return workspaces.peek().find((w) => w.id === id && !w.isDirect)?.id ?? null;
}

export async function loadKeybinds(): Promise<void> {
  const serverId = currentServer();
  keybinds.value = await readAll<Keybind & { cursor: string }>(
    KEYBINDS,
    'keybinds',
    { serverId },
    COMMAND_LIST_PAGE,
  );
  await loadPluginKeybinds(serverId, keybinds.peek());
}

/** Listens for the keybinds' chords everywhere in the signed-in app. */
export function useKeybinds(): void {
  const r = route.value;
  const serverId = r.name === 'workspace' ? r.serverId : null;
  // A plugin enabled, disabled or changed brings its keybinds or takes them away.
  const plugins = pluginChanges.value;
  // So does a workspace's default keybind or macro set or removed elsewhere.
  const lists = commandListChanges.value;
  useEffect(() => {
    void loadKeybinds().catch(() => undefined);
  }, [serverId, plugins, lists]);
  useEffect(() => {
    const f = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.repeat || document.querySelector('dialog[open]')) return;
      const chord = chordOf(e);
      if (!chord) return;
      const all = keybinds.peek().filter((k) => k.chord === chord);
      const k = all.find((x) => x.ownerId) ?? all[0];
      const server = currentServer();
      const byPlugin = pluginKeybinds.peek().find((x) => x.chord === chord && !x.refused);
      if (k) {
        e.preventDefault();
        void run(k).catch(showError);
      } else if (byPlugin && server) {
        e.preventDefault();
        void runPluginKeybind(byPlugin, server).catch(showError);
      }
    };
    addEventListener('keydown', f);
    return () => removeEventListener('keydown', f);
  }, []);
}

async function run(k: Keybind): Promise<void> {
  const conversationId = openConversation.peek();
  const c = conversationId ? conversations.peek()[conversationId] : undefined;
  const context = {
    ...(c ? { serverId: c.serverId, conversationId: c.id } : {}),
    ...(!c && currentServer() ? { serverId: currentServer()! } : {}),
  };
  if (k.command) {
    await runCommand({ command: k.command, args: k.args, context, initiator: 'KEYBIND' });
    return;
  }
  const direct = !c || workspaces.peek().find((w) => w.id === c.serverId)?.isDirect !== false;
  const macros = await macrosHere(c?.serverId ?? '', direct);
  const macro = macros.find((m) => m.id === k.macroId);
  if (!macro) {
    throw new ApiError(
      'the macro of this keybind is gone; bind the keys again in Settings, Commands',
      'VALIDATION',
    );
  }
  await runMacro(macro, k.args, context, 'KEYBIND');
}
