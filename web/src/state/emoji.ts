import { signal } from '@preact/signals';

import { gql } from '../api/graphql.ts';
import { CUSTOM_EMOJIS } from '../api/queries.ts';
import type { CustomEmoji } from '../api/types.ts';
import { hostOfId } from '../remote/routing.ts';

import { featureOn, serverInfo, workspaces } from './store.ts';

/** Each workspace's custom emoji (feature `custom_emoji`), read once when first needed. */
export const customEmoji = signal<Record<string, CustomEmoji[]>>({});
const asked = new Set<string>();

/** Reads (again) a workspace's custom emoji; nothing for the direct space or while off. */
export async function loadCustomEmoji(serverId: string): Promise<void> {
  asked.add(serverId);
  // A workspace of another server follows its host's switch, which refuses the read when off.
  if (!hostOfId(serverId) && !featureOn('custom_emoji')) return;
  if (workspaces.value.find((w) => w.id === serverId)?.isDirect !== false) return;
  try {
    // Every one the workspace has fits the first page (the server's default); by name to show.
    const d = await gql<{ customEmojis: CustomEmoji[] }>(CUSTOM_EMOJIS, { serverId });
    const list = [...d.customEmojis].sort((a, b) => a.name.localeCompare(b.name));
    customEmoji.value = { ...customEmoji.value, [serverId]: list };
  } catch {
    // shown as text until the next read
  }
}

/** The workspace's custom emoji, loading them on first use. */
export function emojiOf(serverId: string | null | undefined): CustomEmoji[] {
  if (!serverId) return [];
  if (!asked.has(serverId) && serverInfo.value && workspaces.value.length) {
    void loadCustomEmoji(serverId);
  }
  return customEmoji.value[serverId] ?? [];
}

/** The emoji `:name:` (or `name`) stands for in this workspace, if it has one. */
export function findCustomEmoji(
  serverId: string | null | undefined,
  name: string,
): CustomEmoji | undefined {
  const n = name.replace(/^:|:$/g, '').toLowerCase();
  return emojiOf(serverId).find((e) => e.name === n);
}

export function forgetCustomEmoji(): void {
  asked.clear();
  customEmoji.value = {};
}
