import { signal } from '@preact/signals';

/**
 * Counts changes to any workspace's plugin registry, seen live (`WorkspacePlugin*` events) or
 * made in this page: lists of commands kept for a while are read again after one.
 */
export const pluginChanges = signal(0);

export function pluginsChanged(): void {
  pluginChanges.value += 1;
}
