import { ApiError } from '../../api/graphql.ts';
import { COMMAND_LIST_PAGE, MACROS } from '../../api/command-queries.ts';
import { readAll } from '../../api/paged.ts';
import type { Command, Conversation, Macro } from '../../api/types.ts';
import { commandListChanges } from '../../state/command-lists.ts';

import { argumentHint, commandsHere, runCommand, runMacro } from './run.ts';

// The message box's `/`: what may be run here (commands, then the person's and the workspace's
// macros), and running a typed line.

export type SlashTarget = { kind: 'command'; command: Command } | { kind: 'macro'; macro: Macro };

export interface SlashItem {
  name: string;
  detail: string;
  target: SlashTarget;
}

const macroLists = new Map<string, { at: number; seen: number; list: Promise<Macro[]> }>();

/**
 * The person's macros and the workspace's (not the direct space's), kept a minute or until a
 * workspace's macros change (`commandListChanges`).
 */
export function macrosHere(serverId: string, direct: boolean): Promise<Macro[]> {
  const key = direct ? '' : serverId;
  const had = macroLists.get(key);
  const seen = commandListChanges.peek();
  if (had && had.seen === seen && Date.now() - had.at < 60_000) return had.list;
  const list = readMacros(direct ? null : serverId);
  list.catch(() => macroLists.delete(key));
  macroLists.set(key, { at: Date.now(), seen, list });
  return list;
}

/** Every macro `macros(serverId)` lists, by name. */
export async function readMacros(serverId: string | null): Promise<Macro[]> {
  const all = await readAll<Macro & { cursor: string }>(
    MACROS,
    'macros',
    { serverId },
    COMMAND_LIST_PAGE,
  );
  return all.sort((a, b) => a.name.localeCompare(b.name));
}

export function forgetMacroLists(): void {
  macroLists.clear();
}

/** Everything runnable here whose name starts with `q`, commands first. */
export async function slashItems(
  c: Conversation,
  q: string,
  direct: boolean,
): Promise<SlashItem[]> {
  const [commands, macros] = await Promise.all([
    commandsHere(c.id),
    macrosHere(c.serverId, direct).catch(() => [] as Macro[]),
  ]);
  const items: SlashItem[] = [];
  for (const command of commands) {
    if (!command.name.startsWith(q)) continue;
    const hint = argumentHint(command);
    const from = command.source.kind === 'PLUGIN' ? ` (plugin ${command.source.pluginId})` : '';
    items.push({
      name: command.name,
      detail: `${hint ? `${hint} · ` : ''}${command.description}${from}${command.destructive ? ' · asks first' : ''}`,
      target: { kind: 'command', command },
    });
  }
  for (const macro of macros) {
    if (!macro.name.startsWith(q) || items.some((i) => i.name === macro.name)) continue;
    const hint = macro.params.map((p) => `<${p}>`).join(' ');
    items.push({
      name: macro.name,
      detail: `${hint ? `${hint} · ` : ''}macro: ${macro.description ?? `${macro.steps.length} steps`}`,
      target: { kind: 'macro', macro },
    });
  }
  return items;
}

/** Splits a line into words, a "quoted phrase" being one word. */
export function words(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) out.push(m[1] ?? m[2] ?? '');
  return out;
}

/**
 * Runs a line typed in the message box (`/name rest`): a command with the rest as its text, or
 * a macro with the rest's words as its parameters in order. An unknown name is said in words.
 */
export async function runSlashLine(c: Conversation, line: string, direct: boolean): Promise<void> {
  const m = /^\/([^\s]*)\s*([\s\S]*)$/.exec(line.trim());
  const name = (m?.[1] ?? '').toLowerCase();
  const rest = m?.[2] ?? '';
  const items = await slashItems(c, name, direct);
  const hit = items.find((i) => i.name === name);
  if (!hit) {
    throw new ApiError(
      `there is no command /${name} here; type / to see the commands you may run in this conversation, or start the message with a space to send it as text`,
      'VALIDATION',
    );
  }
  const context = { serverId: c.serverId, conversationId: c.id };
  if (hit.target.kind === 'command') {
    const src = hit.target.command.source;
    await runCommand({ command: name, plugin: src.workspacePluginId, text: rest, context });
    return;
  }
  const macro = hit.target.macro;
  const values = words(rest);
  const args = Object.fromEntries(macro.params.map((p, i) => [p, values[i] ?? '']));
  await runMacro(macro, args, context, 'USER');
}
