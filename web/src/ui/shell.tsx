import { useEffect, useState } from 'preact/hooks';

import { gql } from '../api/graphql.ts';
import { JOIN_WORKSPACE, SET_PRESENCE } from '../api/queries.ts';
import type { Workspace } from '../api/types.ts';
import { navigate, route } from '../state/router.ts';
import { follow, loadEverything } from '../state/session.ts';
import { connection, conversations, directSpace, workspaces } from '../state/store.ts';
import {
  drawerOpen,
  inboxOpen,
  lastServer,
  pageTitle,
  searchOpen,
  sidePane,
} from '../state/view.ts';

import { ConversationView } from './conversation-view.tsx';
import { lazyScreen } from './lazy.tsx';
import { SearchDialog } from './search.tsx';
import { QuickSwitcher, ShortcutHelp, useShortcuts } from './shortcuts.tsx';
import { SidePane } from './side-pane.tsx';
import { Sidebar, WorkspaceRail } from './sidebar.tsx';
import { showError, showInfo } from './toasts.tsx';
import { DrawerToggle } from './drawer-toggle.tsx';
import { useOpenMessageLinks } from './open-message-links.ts';
import { useKeybinds } from './commands/keybinds.ts';

// Screens most people open rarely load on demand, keeping the first load small.
const Settings = lazyScreen(() => import('./settings/settings.tsx'));
const Admin = lazyScreen(() => import('./admin/admin.tsx'));
const Inbox = lazyScreen(() => import('./inbox.tsx'));

/** The signed-in app: workspaces, conversations, the open conversation and its side pane. */
export function Shell() {
  const r = route.value;
  const [dialog, setDialog] = useState<'switcher' | 'help' | null>(null);
  useShortcuts(setDialog);
  useInviteRoute();
  useIdlePresence();
  useOpenMessageLinks();
  useKeybinds();

  // Land somewhere useful: the first workspace's first channel, or the direct messages.
  useEffect(() => {
    if (r.name !== 'home') return;
    const first = workspaces.value.find((w) => !w.isDirect) ?? directSpace.value;
    if (first)
      navigate({ name: 'workspace', serverId: first.id, conversationId: null }, { replace: true });
  }, [r.name]);

  useEffect(() => {
    if (r.name === 'workspace') lastServer.value = r.serverId;
  }, [r]);

  // The window title: the screen, and how many messages wait unread.
  const unread = Object.values(conversations.value).reduce(
    (n, c) => n + (c.isMember ? c.unreadCount : 0),
    0,
  );
  useEffect(() => {
    document.title = `${unread ? `(${unread}) ` : ''}${pageTitle.value} · svc`;
  }, [unread, pageTitle.value]);

  const wide = sidePane.value !== null;
  // The skip link goes to the message box only where there is one (a conversation one is in).
  const open =
    r.name === 'workspace' && r.conversationId ? conversations.value[r.conversationId] : null;
  const hasBox = !!open?.isMember;
  return (
    <div class={`shell${drawerOpen.value ? ' drawer-open' : ''}${wide ? ' with-pane' : ''}`}>
      {hasBox ? (
        <a class="skip" href="#composer-input">
          Skip to the message box
        </a>
      ) : (
        <a class="skip" href="#main">
          Skip to the main content
        </a>
      )}
      <WorkspaceRail />
      <Sidebar />
      <main id="main" class="main" tabIndex={-1}>
        {connection.value !== 'online' && (
          <p class="banner" role="status">
            Reconnecting to the server… Messages you send are kept until it is back.
          </p>
        )}
        {!(r.name === 'workspace' && r.conversationId) && (
          <div class="mobile-bar">
            <DrawerToggle />
          </div>
        )}
        {r.name === 'workspace' && <ConversationView />}
        {r.name === 'settings' && <Settings tab={r.tab} />}
        {r.name === 'admin' && <Admin tab={r.tab} />}
        {r.name === 'home' && <p class="empty">Pick a conversation on the left.</p>}
      </main>
      {sidePane.value && <SidePane />}
      {dialog === 'switcher' && <QuickSwitcher onClose={() => setDialog(null)} />}
      {dialog === 'help' && <ShortcutHelp onClose={() => setDialog(null)} />}
      {searchOpen.value && <SearchDialog />}
      {inboxOpen.value && <Inbox />}
    </div>
  );
}

/** `/invite/<token>` while signed in: join that workspace and open it. */
function useInviteRoute(): void {
  const r = route.value;
  useEffect(() => {
    if (r.name !== 'invite') return;
    gql<{ joinWorkspace: Workspace }>(JOIN_WORKSPACE, { token: r.token })
      .then(async ({ joinWorkspace: w }) => {
        await loadEverything();
        follow();
        showInfo(`You joined ${w.name}.`);
        navigate({ name: 'workspace', serverId: w.id, conversationId: null }, { replace: true });
      })
      .catch((err) => {
        showError(err);
        navigate({ name: 'home' }, { replace: true });
      });
  }, [r.name === 'invite' ? r.token : '']);
}

const IDLE_MS = 10 * 60 * 1000;

/** Tells the server the person is back after being idle (it marks them away after 10 minutes). */
function useIdlePresence(): void {
  useEffect(() => {
    let last = Date.now();
    const active = () => {
      const now = Date.now();
      if (now - last > IDLE_MS) void gql(SET_PRESENCE, { choice: 'AUTO' }).catch(() => undefined);
      last = now;
    };
    const events = ['keydown', 'pointerdown', 'focus'] as const;
    for (const e of events) addEventListener(e, active, { passive: true });
    return () => {
      for (const e of events) removeEventListener(e, active);
    };
  }, []);
}
