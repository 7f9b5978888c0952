import { signal } from '@preact/signals';

// What the person is looking at, so events know whether a new message is read at once.

/** The conversation on screen; null when none. */
export const openConversation = signal<string | null>(null);
/** Whether the timeline on screen is scrolled to its newest message. */
export const atBottom = signal(true);
/** The right-hand pane: a thread, the pins, or the member list of the open conversation. */
export const sidePane = signal<
  | { kind: 'thread'; rootId: string }
  | { kind: 'pins' }
  | { kind: 'members' }
  | { kind: 'workspace-admin'; serverId: string }
  | null
>(null);
/** The workspace last opened: the sidebar keeps showing it on the settings and admin pages. */
export const lastServer = signal<string | null>(null);
/** Whether the message search dialog is open (Ctrl+Shift+F, or the sidebar's button). */
export const searchOpen = signal(false);
/** Narrow screens show the conversation list as a drawer. */
export const drawerOpen = signal(false);

export function reading(conversationId: string): boolean {
  return (
    openConversation.value === conversationId &&
    atBottom.value &&
    document.visibilityState === 'visible'
  );
}

/** What the screen shows, for the window title (the shell adds the unread count). */
export const pageTitle = signal('svc');
/** Whether the notifications inbox is open (its button in the workspace rail). */
export const inboxOpen = signal(false);
/** The conversation last opened (what a macro run from the settings acts in). */
export const lastConversation = signal<string | null>(null);
