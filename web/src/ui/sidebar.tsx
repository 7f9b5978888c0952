import { computed } from '@preact/signals';
import { useState } from 'preact/hooks';

import type { Conversation, Workspace } from '../api/types.ts';
import { navigate, route } from '../state/router.ts';
import { signOut } from '../state/session.ts';
import { conversations, dmRequests, me, presence, titleOf, workspaces } from '../state/store.ts';
import { drawerOpen, inboxOpen, lastServer, searchOpen } from '../state/view.ts';
import { unreadNotifications } from '../state/notifications.ts';

import { Icon } from './icons.tsx';
import { isInvitation } from '../e2ee/glue.ts';
import { lazyScreen } from './lazy.tsx';
import { PresenceDot } from './presence.tsx';
import { showError } from './toasts.tsx';
import { hostOfId, isSelf } from '../remote/routing.ts';
import { RemoteHostLine } from '../remote/host-line.tsx';

export const WorkspaceDialogs = lazyScreen(() => import('./workspace/workspace-dialogs.tsx'));

export type SidebarDialog =
  | { kind: 'new-workspace' }
  | { kind: 'browse-channels'; serverId: string }
  | { kind: 'new-channel'; serverId: string }
  | { kind: 'new-conversation' }
  | { kind: 'dm-requests' }
  | { kind: 'workspace-admin'; serverId: string; tab: string }
  | { kind: 'channel-settings'; conversationId: string }
  | { kind: 'add-people'; conversationId: string };

const currentServer = computed(() => {
  const r = route.value;
  return r.name === 'workspace' ? r.serverId : lastServer.value;
});

function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const s = words.length > 1 ? words[0]![0]! + words[1]![0]! : name.slice(0, 2);
  return s.toUpperCase();
}

function unreadIn(serverId: string): number {
  let n = 0;
  for (const c of Object.values(conversations.value)) {
    if (c.serverId === serverId && c.isMember) n += c.unreadCount;
  }
  return n;
}

/** Mentions of the person not yet read in a workspace (a host's counted by the host). */
function mentionsIn(serverId: string): number {
  let n = 0;
  for (const c of Object.values(conversations.value)) {
    if (c.serverId === serverId && c.isMember) n += c.mentionCount ?? 0;
  }
  return n;
}

/** The column of workspaces, with the direct messages first. */
export function WorkspaceRail() {
  const [dialog, setDialog] = useState<SidebarDialog | null>(null);
  const current = currentServer.value;
  const r = route.value;
  return (
    <nav class="rail" aria-label="Workspaces">
      <ul class="plain">
        {workspaces.value.map((w) => {
          const unread = unreadIn(w.id);
          const mentions = mentionsIn(w.id);
          const host = hostOfId(w.id);
          const label = w.isDirect ? 'Direct messages' : host ? `${w.name} on ${host}` : w.name;
          return (
            <li key={w.id}>
              <button
                type="button"
                class={`rail-item${current === w.id ? ' current' : ''}`}
                aria-current={current === w.id ? 'page' : undefined}
                title={label}
                onClick={() =>
                  navigate({ name: 'workspace', serverId: w.id, conversationId: null })
                }
              >
                <span class="visually-hidden">
                  {`${label}${unread ? `, ${unread} unread` : ''}${
                    mentions ? `, ${mentions} mention${mentions === 1 ? '' : 's'}` : ''
                  }`}
                </span>
                {w.isDirect ? (
                  <Icon name="mail" />
                ) : (
                  <span aria-hidden="true">{initials(w.name)}</span>
                )}
                {host && (
                  <span class="rail-host" aria-hidden="true">
                    <Icon name="globe" />
                  </span>
                )}
                {mentions > 0 ? (
                  <span class="rail-count" aria-hidden="true">
                    {mentions > 99 ? '99+' : mentions}
                  </span>
                ) : (
                  unread > 0 && <span class="dot" aria-hidden="true" />
                )}
              </button>
            </li>
          );
        })}
        <li>
          <button
            type="button"
            class="rail-item add"
            aria-label="Create or join a workspace"
            title="Create or join a workspace"
            onClick={() => setDialog({ kind: 'new-workspace' })}
          >
            <Icon name="plus" />
          </button>
        </li>
      </ul>
      <ul class="plain rail-bottom">
        <li>
          <InboxButton />
        </li>
        {me.value?.instanceOperator && (
          <li>
            <button
              type="button"
              class={`rail-item${r.name === 'admin' ? ' current' : ''}`}
              aria-label="Server administration"
              title="Server administration"
              onClick={() => navigate({ name: 'admin', tab: 'reports' })}
            >
              <Icon name="flag" />
            </button>
          </li>
        )}
        <li>
          <button
            type="button"
            class={`rail-item${r.name === 'settings' ? ' current' : ''}`}
            aria-label="Settings"
            title="Settings"
            onClick={() => navigate({ name: 'settings', tab: 'profile' })}
          >
            <Icon name="gear" />
          </button>
        </li>
        <li>
          <button
            type="button"
            class="rail-item"
            aria-label="Sign out"
            title="Sign out"
            onClick={() => void signOut().catch(showError)}
          >
            <Icon name="out" />
          </button>
        </li>
      </ul>
      {dialog && <WorkspaceDialogs dialog={dialog} onClose={() => setDialog(null)} />}
    </nav>
  );
}

/** The notifications inbox, with how many are unread. */
function InboxButton() {
  const n = unreadNotifications.value;
  const label = `Notifications${n ? `, ${n} unread` : ''}`;
  return (
    <button
      type="button"
      class={`rail-item${inboxOpen.value ? ' current' : ''}`}
      aria-label={label}
      title={label}
      aria-haspopup="dialog"
      onClick={() => (inboxOpen.value = true)}
    >
      <Icon name="bell" />
      {n > 0 && (
        <span class="rail-count" aria-hidden="true">
          {n > 99 ? '99+' : n}
        </span>
      )}
    </button>
  );
}

/** Whether the person's own rule mutes a conversation now. */
export function mutedNow(c: Conversation): boolean {
  const until = c.notificationRule?.mutedUntil;
  return !!until && new Date(until).getTime() > Date.now();
}

function sortChannels(list: Conversation[]): Conversation[] {
  return list.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
}

/** The conversations of the current workspace (or the direct messages). */
export function Sidebar() {
  const [dialog, setDialog] = useState<SidebarDialog | null>(null);
  const serverId = currentServer.value;
  const w = workspaces.value.find((x) => x.id === serverId);
  const r = route.value;
  const openId = r.name === 'workspace' ? r.conversationId : null;
  if (!w) {
    return (
      <nav class="sidebar" aria-label="Conversations">
        <p class="hint">No workspace open.</p>
      </nav>
    );
  }
  const list = Object.values(conversations.value).filter(
    (c) => c.serverId === w.id && (c.isMember || isInvitation(c)),
  );
  const items = w.isDirect
    ? list.sort((a, b) => (a.lastActivityAt < b.lastActivityAt ? 1 : -1))
    : sortChannels(list);
  const staff = w.myRole === 'OWNER' || w.myRole === 'MODERATOR';
  return (
    <nav class="sidebar" aria-label={`Conversations in ${w.isDirect ? 'direct messages' : w.name}`}>
      <header class="sidebar-head">
        <h2 dir="auto">{w.isDirect ? 'Direct messages' : w.name}</h2>
        <RemoteHostLine serverId={w.id} />
        <button
          type="button"
          class="icon drawer-close"
          aria-label="Close the list"
          onClick={() => (drawerOpen.value = false)}
        >
          <Icon name="close" />
        </button>
      </header>
      {w.myTimedOutUntil && new Date(w.myTimedOutUntil) > new Date() && (
        <p class="notice" role="status">
          You are timed out here until {new Date(w.myTimedOutUntil).toLocaleString()}: you can read
          but not write.
        </p>
      )}
      <div class="sidebar-actions">
        <button
          type="button"
          title="Search messages (Ctrl+Shift+F)"
          onClick={() => (searchOpen.value = true)}
        >
          <Icon name="search" /> Search
        </button>
        {w.isDirect ? (
          <>
            <button type="button" onClick={() => setDialog({ kind: 'new-conversation' })}>
              New message
            </button>
            {dmRequests.value.length > 0 && (
              <button type="button" onClick={() => setDialog({ kind: 'dm-requests' })}>
                Message requests ({dmRequests.value.length})
              </button>
            )}
          </>
        ) : (
          <>
            <button
              type="button"
              onClick={() => setDialog({ kind: 'browse-channels', serverId: w.id })}
            >
              Browse channels
            </button>
            {w.myRole !== 'GUEST' && (
              <button
                type="button"
                onClick={() => setDialog({ kind: 'new-channel', serverId: w.id })}
              >
                New channel
              </button>
            )}
            <button
              type="button"
              onClick={() => setDialog({ kind: 'workspace-admin', serverId: w.id, tab: 'invites' })}
            >
              Invite people
            </button>
            <button
              type="button"
              onClick={() => setDialog({ kind: 'workspace-admin', serverId: w.id, tab: 'members' })}
            >
              {staff ? 'Members and moderation' : 'Members'}
            </button>
          </>
        )}
      </div>
      <ConversationList items={items} openId={openId} workspace={w} />
      {dialog && <WorkspaceDialogs dialog={dialog} onClose={() => setDialog(null)} />}
    </nav>
  );
}

function ConversationList(p: {
  items: Conversation[];
  openId: string | null;
  workspace: Workspace;
}) {
  if (!p.items.length) {
    return (
      <p class="hint">
        {p.workspace.isDirect
          ? 'No conversations yet. Start one with “New message”.'
          : 'You are in no channel yet. Browse the channels to join one.'}
      </p>
    );
  }
  const myId = me.value?.id;
  return (
    <ul class="plain conv-list">
      {p.items.map((c) => {
        const title = titleOf(c);
        const mention = c.mentionCount ?? 0;
        const unread = c.unreadCount;
        const partner =
          c.kind === 'DIRECT' ? c.memberIds.find((id) => !isSelf(id, myId)) : undefined;
        // A direct conversation with people of another server lives on that server.
        const host = p.workspace.isDirect ? hostOfId(c.id) : null;
        const muted = mutedNow(c);
        const invited = isInvitation(c);
        const described = [
          invited ? `${title} invitation` : title,
          host ? `on ${host}` : '',
          c.encrypted ? 'end-to-end encrypted' : '',
          c.isPrivate && c.kind === 'CHANNEL' ? 'private' : '',
          muted ? 'muted' : '',
          unread ? `${unread} unread` : '',
          mention ? `${mention} mention${mention === 1 ? '' : 's'}` : '',
          partner ? (presence.value[partner] ?? 'OFFLINE').toLowerCase() : '',
        ]
          .filter(Boolean)
          .join(', ');
        return (
          <li key={c.id}>
            <a
              href={`/w/${c.serverId}/${c.id}`}
              class={`conv${p.openId === c.id ? ' current' : ''}${unread && !muted ? ' unread' : ''}${muted ? ' muted' : ''}`}
              aria-current={p.openId === c.id ? 'page' : undefined}
              aria-label={described}
              onClick={(e) => {
                e.preventDefault();
                drawerOpen.value = false;
                navigate({ name: 'workspace', serverId: c.serverId, conversationId: c.id });
              }}
            >
              {partner ? (
                <PresenceDot userId={partner} />
              ) : (
                <span class="conv-icon">
                  <Icon name={c.kind === 'CHANNEL' ? (c.isPrivate ? 'lock' : 'hash') : 'people'} />
                </span>
              )}
              <span class="conv-name" dir="auto">
                {c.kind === 'CHANNEL' ? c.name : title}
              </span>
              {host && (
                <span class="conv-host" title={`On ${host}`}>
                  <Icon name="globe" />
                </span>
              )}
              {muted && <Icon name="muted" />}
              {c.encrypted && c.kind !== 'CHANNEL' && <Icon name="lock" />}
              {invited && <span class="conv-invite"> invitation</span>}
              {/* Keeps the count a word of its own in the visible text, as in the label. */}
              {mention > 0 || unread > 0 ? ' ' : null}
              {mention > 0 ? (
                <span class="badge mention" aria-hidden="true">
                  {mention}
                </span>
              ) : unread > 0 ? (
                <span class="badge" aria-hidden="true">
                  {unread}
                </span>
              ) : null}
            </a>
          </li>
        );
      })}
    </ul>
  );
}
