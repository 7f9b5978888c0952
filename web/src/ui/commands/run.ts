import { ApiError, gql } from '../../api/graphql.ts';
import { COMMANDS, EXECUTE_COMMAND, EXECUTE_MACRO } from '../../api/command-queries.ts';
import type { Command, CommandRun, Macro, MacroRun } from '../../api/types.ts';
import { pluginChanges } from '../../state/plugins.ts';
import { confirmAction } from '../confirm.tsx';
import { showInfo } from '../toasts.tsx';

// Running commands and macros from the app (docs/commands.md): the message box, the palette's
// argument form and keybinds all come here, so a destructive one is always confirmed in the
// app's own dialog with the server's summary, and the outcome is said the same way.

export interface RunContext {
  serverId?: string;
  conversationId?: string;
}

type Initiator = 'USER' | 'KEYBIND' | 'MACRO';

/**
 * Lists of commands by conversation, kept a minute, and dropped at once when a workspace's
 * plugins change (a plugin's commands come and go with it).
 */
const lists = new Map<string, { at: number; list: Promise<Command[]> }>();
const KEEP_MS = 60_000;
let listsOf = pluginChanges.peek();

/** The commands the person may run from the message box here, built-ins and plugins'. */
export function commandsHere(conversationId: string): Promise<Command[]> {
  if (pluginChanges.peek() !== listsOf) {
    lists.clear();
    listsOf = pluginChanges.peek();
  }
  const had = lists.get(conversationId);
  if (had && Date.now() - had.at < KEEP_MS) return had.list;
  const list = gql<{ commands: Command[] }>(COMMANDS, {
    surface: 'MESSAGE_BOX',
    context: { conversationId },
  }).then((d) => d.commands);
  list.catch(() => lists.delete(conversationId));
  lists.set(conversationId, { at: Date.now(), list });
  return list;
}

export function forgetCommandLists(): void {
  lists.clear();
}

/** `<user> <duration> [reason]`: a command's arguments as the message box takes them. */
export function argumentHint(c: Command): string {
  return c.arguments.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(' ');
}

async function confirmed(name: string, summary: string): Promise<boolean> {
  return confirmAction({
    title: `Run /${name}?`,
    body: summary,
    confirm: `Run /${name}`,
  });
}

/**
 * Runs a command by name with arguments by name (`args`) or as the message box's line (`text`).
 * A destructive one is confirmed first; answers the final result, or null when not confirmed.
 */
export async function runCommand(input: {
  command: string;
  plugin?: string | null;
  args?: Record<string, unknown>;
  text?: string;
  context: RunContext;
  initiator?: Initiator;
}): Promise<CommandRun | null> {
  const base = {
    command: input.command,
    ...(input.plugin ? { plugin: input.plugin } : {}),
    ...(input.text !== undefined ? { text: input.text } : { args: input.args ?? {} }),
    context: input.context,
    initiator: input.initiator ?? 'USER',
  };
  const first = (await gql<{ executeCommand: CommandRun }>(EXECUTE_COMMAND, { input: base }))
    .executeCommand;
  let run = first;
  if (first.status === 'CONFIRMATION_REQUIRED' && first.confirmation) {
    if (!(await confirmed(first.command.name, first.confirmation.summary))) return null;
    run = (
      await gql<{ executeCommand: CommandRun }>(EXECUTE_COMMAND, {
        input: { ...base, confirmationToken: first.confirmation.token },
      })
    ).executeCommand;
  }
  await tell(run, input.context);
  return run;
}

/**
 * Says what a run did, unless it posted a message (which shows in the conversation). A plugin
 * command's code runs here, in its sandbox (plugins/host.ts, loaded on first use); its reply is
 * said to the person, and a failure is thrown in words.
 */
async function tell(run: CommandRun, context: RunContext): Promise<void> {
  if (run.status === 'CLIENT_ACTION') {
    const { runPluginAction } = await import('../../plugins/host.ts');
    const reply = await runPluginAction(run, context);
    if (reply) showInfo(`/${run.command.name}: ${reply}`);
  } else if (!run.messageId && run.message) {
    showInfo(run.message);
  }
}

/** Runs a macro's steps here; one confirmation covers its destructive steps. */
export async function runMacro(
  macro: Macro,
  args: Record<string, unknown>,
  context: RunContext,
  initiator: Initiator = 'MACRO',
): Promise<MacroRun | null> {
  const base = { macroId: macro.id, args, context, initiator };
  let run = (await gql<{ executeMacro: MacroRun }>(EXECUTE_MACRO, { input: base })).executeMacro;
  if (run.status === 'CONFIRMATION_REQUIRED' && run.confirmation) {
    if (!(await confirmed(macro.name, run.confirmation.summary))) return null;
    run = (
      await gql<{ executeMacro: MacroRun }>(EXECUTE_MACRO, {
        input: { ...base, confirmationToken: run.confirmation.token },
      })
    ).executeMacro;
  }
  if (run.status === 'FAILED') {
    const at = (run.failedStep ?? 0) + 1;
    throw new ApiError(
      `step ${at} of /${macro.name} failed: ${run.error?.message ?? 'refused'} (the steps before it ran)`,
      run.error?.code ?? 'VALIDATION',
    );
  }
  // Plugin steps' code runs here, in order, after the server has checked and recorded them all.
  for (const step of run.steps) {
    if (step.status === 'CLIENT_ACTION') await tell(step, context);
  }
  showInfo(`/${macro.name} ran (${run.steps.length} step${run.steps.length === 1 ? '' : 's'}).`);
  return run;
}
