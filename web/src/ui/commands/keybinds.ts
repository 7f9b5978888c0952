import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';

import { ApiError } from '../../api/graphql.ts';
import { COMMAND_LIST_PAGE, KEYBINDS } from '../../api/command-queries.ts';
import { readAll } from '../../api/paged.ts';
import type { Keybind } from '../../api/types.ts';
import { route } from '../../state/router.ts';
import { conversations, workspaces } from '../../state/store.ts';
import { lastServer, openConversation } from '../../state/view.ts';
import { showError } from '../toasts.tsx';

import { chordOf } from './chords.ts';
import { runCommand, runMacro } from './run.ts';
import { macrosHere } from './slash.ts';

// Keybinds run anywhere in the app (docs/commands.md): the person's own, and the defaults of
// the workspace on screen, a person's chord winning over a default of the same chord.

/** The keybinds in force: the person's and the current workspace's defaults. */
export const keybinds = signal<Keybind[]>([]);

function currentServer(): string | null {
  const r = route.peek();
  const id = r.name === 'workspace' ? r.serverId : lastServer.peek();
  return workspaces.peek().find((w) => w.id === id && !w.isDirect)?.id ?? null;
}

export async function loadKeybinds(): Promise<void> {
  keybinds.value = await readAll<Keybind & { cursor: string }>(
    KEYBINDS,
    'keybinds',
    { serverId: currentServer() },
    COMMAND_LIST_PAGE,
  );
}

/** Listens for the keybinds' chords everywhere in the signed-in app. */
export function useKeybinds(): void {
  const r = route.value;
  const serverId = r.name === 'workspace' ? r.serverId : null;
  useEffect(() => {
    void loadKeybinds().catch(() => undefined);
  }, [serverId]);
  useEffect(() => {
    const f = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.repeat || document.querySelector('dialog[open]')) return;
      const chord = chordOf(e);
      if (!chord) return;
      const all = keybinds.peek().filter((k) => k.chord === chord);
      const k = all.find((x) => x.ownerId) ?? all[0];
      if (!k) return;
      e.preventDefault();
      void run(k).catch(showError);
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
