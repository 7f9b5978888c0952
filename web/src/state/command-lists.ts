import { signal } from '@preact/signals';

/**
 * Counts changes to a workspace's macros or default keybinds seen live (`WorkspaceMacro*`,
 * `WorkspaceKeybind*` events, docs/events.md): the macro lists, the `/` palette's macros and the
 * keybinds in force are read again after one, so a change made elsewhere shows without a reload.
 */
export const commandListChanges = signal(0);

export function commandListsChanged(): void {
  commandListChanges.value += 1;
}
