import type { ComponentChildren } from 'preact';

import type { Conversation } from '../api/types.ts';

/**
 * Buttons before the message box contributed by optional features (attaching a file once the
 * `attachments` API is on the server, commands, ...). Each answers null when it does not apply.
 */
export type ComposerAction = (
  c: Conversation,
  threadRootId: string | undefined,
  insert: (text: string) => void,
) => ComponentChildren | null;

const actions: ComposerAction[] = [];

export function registerComposerAction(a: ComposerAction): void {
  actions.push(a);
}

export function composerActions(
  c: Conversation,
  threadRootId: string | undefined,
  insert: (text: string) => void,
): ComponentChildren[] {
  return actions.map((a) => a(c, threadRootId, insert)).filter((x) => x !== null);
}
