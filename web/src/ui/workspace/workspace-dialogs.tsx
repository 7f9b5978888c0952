import { useEffect, useState } from 'preact/hooks';

import { gql } from '../../api/graphql.ts';
import {
  ACCEPT_DM,
  BLOCK_USER,
  CREATE_CHANNEL,
  CREATE_CONVERSATION,
  CREATE_WORKSPACE,
  DECLINE_DM,
  JOIN_CHANNEL,
  JOIN_WORKSPACE,
  MEMBERS,
  SEARCH_CHANNELS,
} from '../../api/queries.ts';
import type { Conversation, User, Workspace, WorkspaceMember } from '../../api/types.ts';
import { navigate } from '../../state/router.ts';
import { follow, loadEverything, refreshDmRequests } from '../../state/session.ts';
import {
  conversations,
  directSpace,
  dmRequests,
  me,
  putConversations,
  rememberUsers,
  workspaces,
} from '../../state/store.ts';
import { Dialog } from '../dialog.tsx';
import { MessageText } from '../format.tsx';
import { PeoplePicker } from '../people-picker.tsx';
import type { SidebarDialog } from '../sidebar.tsx';
import { ErrorText, showInfo } from '../toasts.tsx';
import { hostOfId, isSelf } from '../../remote/routing.ts';
import { joinRemote, remoteInvite } from '../../remote/spaces.ts';

import { ChannelSettings } from './channel-settings.tsx';
import { WorkspaceAdmin } from './workspace-admin.tsx';
import { confirmAction } from '../confirm.tsx';
import { e2ee } from '../../e2ee/glue.ts';
import { AddPeople, Lock } from '../../e2ee/ui.tsx';

export default function WorkspaceDialogs(p: { dialog: SidebarDialog; onClose: () => void }) {
  const d = p.dialog;
  switch (d.kind) {
    case 'new-workspace':
      return <NewWorkspace onClose={p.onClose} />;
    case 'browse-channels':
      return <BrowseChannels serverId={d.serverId} onClose={p.onClose} />;
    case 'new-channel':
      return <NewChannel serverId={d.serverId} onClose={p.onClose} />;
    case 'new-conversation':
      return <NewConversation onClose={p.onClose} />;
    case 'dm-requests':
      return <DmRequests onClose={p.onClose} />;
    case 'workspace-admin':
      return <WorkspaceAdmin serverId={d.serverId} tab={d.tab} onClose={p.onClose} />;
    case 'channel-settings':
      return <ChannelSettings conversationId={d.conversationId} onClose={p.onClose} />;
    case 'add-people':
      return <AddPeopleDialog conversationId={d.conversationId} onClose={p.onClose} />;
  }
}

function AddPeopleDialog(p: { conversationId: string; onClose: () => void }) {
  const people = usePeople();
  const c = conversations.value[p.conversationId];
  return c ? <AddPeople c={c} people={people} onClose={p.onClose} /> : null;
}

/** An invite link or its bare token: the part after `/invite/`. */
export function tokenOf(input: string): string {
  const s = input.trim();
  const m = /\/invite\/([^/?#\s]+)/.exec(s);
  return m ? decodeURIComponent(m[1] as string) : s;
}

function NewWorkspace({ onClose }: { onClose: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const opened = async (w: Workspace) => {
    await loadEverything();
    follow();
    onClose();
    navigate({ name: 'workspace', serverId: w.id, conversationId: null });
  };
  return (
    <Dialog title="Create or join a workspace" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          gql<{ createWorkspace: Workspace }>(CREATE_WORKSPACE, {
            input: {
              name: String(f.get('name')).trim(),
              description: String(f.get('description') ?? '').trim() || null,
            },
          })
            .then((r) => opened(r.createWorkspace))
            .catch(setError);
        }}
      >
        <h3>Create a workspace</h3>
        <label>
          Name
          <input name="name" required maxLength={80} dir="auto" />
        </label>
        <label>
          Description (optional)
          <input name="description" maxLength={1000} dir="auto" />
        </label>
        <button type="submit" class="primary">
          Create
        </button>
      </form>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const text = String(new FormData(e.currentTarget).get('invite'));
          // A link of another server: joined there through this server's relay route.
          const elsewhere = remoteInvite(text);
          (elsewhere
            ? joinRemote(elsewhere.host, elsewhere.token)
            : gql<{ joinWorkspace: Workspace }>(JOIN_WORKSPACE, { token: tokenOf(text) }).then(
                (r) => r.joinWorkspace,
              )
          )
            .then(opened)
            .catch(setError);
        }}
      >
        <h3>Join with an invite</h3>
        <p class="hint">A link of another server works too: you take part from here.</p>
        <label>
          Invite link or code
          <input name="invite" required autoCapitalize="none" />
        </label>
        <button type="submit">Join</button>
      </form>
      <ErrorText error={error} />
    </Dialog>
  );
}

function BrowseChannels({ serverId, onClose }: { serverId: string; onClose: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [q, setQ] = useState('');
  // Matches by name or topic as the server folds words (accents, width, CJK), not only prefixes
  // of the ASCII name; null while the box is empty.
  const [found, setFound] = useState<Set<string> | null>(null);
  useEffect(() => {
    const query = q.trim();
    if (!query) return setFound(null);
    const t = setTimeout(() => {
      gql<{ searchChannels: Conversation[] }>(SEARCH_CHANNELS, { serverId, query })
        .then((d) => {
          putConversations(d.searchChannels);
          setFound(new Set(d.searchChannels.map((c) => c.id)));
        })
        .catch(setError);
    }, 200);
    return () => clearTimeout(t);
  }, [q]);
  const list = Object.values(conversations.value)
    .filter((c) => c.serverId === serverId && c.kind === 'CHANNEL' && !c.archived)
    .filter((c) => !found || found.has(c.id))
    .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
  const join = (c: Conversation) =>
    gql<{ joinChannel: Conversation }>(JOIN_CHANNEL, { id: c.id })
      .then((d) => {
        putConversations([d.joinChannel]);
        onClose();
        navigate({ name: 'workspace', serverId, conversationId: c.id });
      })
      .catch(setError);
  return (
    <Dialog title="Channels" onClose={onClose}>
      <input
        type="search"
        aria-label="Find a channel by name or topic"
        placeholder="Find a channel"
        dir="auto"
        value={q}
        onInput={(e) => setQ(e.currentTarget.value)}
      />
      <ErrorText error={error} />
      {found && !list.length && <p class="hint">No channel matches.</p>}
      <ul class="plain channel-browser">
        {list.map((c) => (
          <li key={c.id}>
            <span dir="auto">
              {c.isPrivate ? '🔒' : '#'}
              {c.name}
            </span>
            {c.topic && (
              <span class="muted" dir="auto">
                {' '}
                — {c.topic}
              </span>
            )}{' '}
            <span class="muted">{c.memberCount} members</span>
            {c.isMember ? (
              <button
                type="button"
                onClick={() => {
                  onClose();
                  navigate({ name: 'workspace', serverId, conversationId: c.id });
                }}
              >
                Open
              </button>
            ) : (
              <button type="button" class="primary" onClick={() => void join(c)}>
                Join
              </button>
            )}
          </li>
        ))}
      </ul>
    </Dialog>
  );
}

function NewChannel({ serverId, onClose }: { serverId: string; onClose: () => void }) {
  const [error, setError] = useState<unknown>(null);
  return (
    <Dialog title="New channel" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          gql<{ createChannel: Conversation }>(CREATE_CHANNEL, {
            input: {
              serverId,
              name: String(f.get('name')).trim(),
              topic: String(f.get('topic') ?? '').trim() || null,
              isPrivate: f.get('private') === 'on',
            },
          })
            .then((d) => {
              putConversations([d.createChannel]);
              onClose();
              navigate({ name: 'workspace', serverId, conversationId: d.createChannel.id });
            })
            .catch(setError);
        }}
      >
        <label>
          Name
          <input
            name="name"
            required
            maxLength={80}
            pattern="#?[A-Za-z0-9_\- ]+"
            aria-describedby="ch-rule"
          />
        </label>
        <p class="hint" id="ch-rule">
          Letters, digits, dashes and underscores; spaces become dashes.
        </p>
        <label>
          Topic (optional)
          <input name="topic" maxLength={250} dir="auto" />
        </label>
        <label class="check">
          <input type="checkbox" name="private" />
          <span>Private: only the people added can see it</span>
        </label>
        <ErrorText error={error} />
        <button type="submit" class="primary">
          Create channel
        </button>
      </form>
    </Dialog>
  );
}

/**
 * People one can start a conversation with: the members of one's workspaces, a host's read
 * through the relay (their ids are the host's, so the conversation is made there).
 */
function usePeople(): User[] | null {
  const [people, setPeople] = useState<User[] | null>(null);
  useEffect(() => {
    const real = workspaces.value.filter((w) => !w.isDirect);
    void Promise.all(
      real.map((w) =>
        gql<{ workspace: { members: { items: WorkspaceMember[] } | null } }>(MEMBERS, {
          serverId: w.id,
        })
          .then((d) => d.workspace.members?.items.map((m) => m.user) ?? [])
          .catch(() => [] as User[]),
      ),
    ).then((lists) => {
      const byId = new Map<string, User>();
      for (const u of lists.flat()) if (!isSelf(u.id, me.value?.id)) byId.set(u.id, u);
      const all = [...byId.values()].sort((a, b) => a.username.localeCompare(b.username));
      rememberUsers(all);
      setPeople(all);
    });
  }, []);
  return people;
}

function NewConversation({ onClose }: { onClose: () => void }) {
  const people = usePeople();
  const [picked, setPicked] = useState<string[]>([]);
  const [q, setQ] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [encrypted, setEncrypted] = useState(false);
  const [busy, setBusy] = useState(false);
  // A conversation lives on one server: this one's people, or one host's.
  const servers = new Set(picked.map((id) => hostOfId(id) ?? ''));
  const mixed = servers.size > 1;
  const host = servers.size === 1 ? [...servers][0] || null : null;
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      // An encrypted one needs this browser set up first (the person is asked when it is not).
      const client = encrypted && !host ? await e2ee() : null;
      if (client) await client.ensureDevice(true);
      const d = await gql<{
        createConversation: { conversation: Conversation; dmRequestsSent: { id: string }[] };
      }>(CREATE_CONVERSATION, {
        input: { memberIds: picked, ...(encrypted && !host ? { encrypted } : {}) },
      });
      const c = d.createConversation.conversation;
      putConversations([c]);
      if (client) await client.sync(c.id);
      {
        if (d.createConversation.dmRequestsSent.length) {
          showInfo('A message request was sent: they join when they accept it.');
        }
        onClose();
        navigate({
          name: 'workspace',
          serverId: directSpace.value?.id ?? c.serverId,
          conversationId: c.id,
        });
      }
    } catch (err) {
      if (!(err instanceof Error && err.name === 'NotSetUp')) setError(err);
    } finally {
      setBusy(false);
    }
  };
  const shown = (people ?? []).filter(
    (u) =>
      !q ||
      u.username.toLowerCase().includes(q.toLowerCase()) ||
      u.displayName?.toLowerCase().includes(q.toLowerCase()),
  );
  return (
    <Dialog title="New message" onClose={onClose}>
      <label>
        Find people
        <input type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
      </label>
      {!people && <p class="loading">Loading people…</p>}
      {people && !people.length && (
        <p class="hint">
          You share no workspace with anyone yet. Join one, then start a conversation.
        </p>
      )}
      <PeoplePicker
        legend="People (one for a direct conversation, several for a group)"
        people={shown.slice(0, 100)}
        picked={picked}
        onChange={setPicked}
      />
      <label class="check">
        <input
          type="checkbox"
          checked={encrypted && !host}
          disabled={!!host}
          onChange={(e) => setEncrypted(e.currentTarget.checked)}
        />
        <Lock /> End-to-end encrypted
        <span class="hint">
          {host
            ? `Encrypted conversations are kept on this server: people of ${host} cannot be in one.`
            : 'Only your and their devices can read it; the server keeps ciphertext only. People without a device set up for encryption are invited and join when they accept.'}
        </span>
      </label>
      {mixed && (
        <p class="hint" role="status">
          A conversation is kept on one server: pick people of this server, or of one other server
          only.
        </p>
      )}
      <ErrorText error={error} />
      <button
        type="button"
        class="primary"
        disabled={!picked.length || mixed || busy}
        onClick={() => void start()}
      >
        {picked.length > 1 ? 'Start group conversation' : 'Start conversation'}
      </button>
    </Dialog>
  );
}

function DmRequests({ onClose }: { onClose: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const act = async (f: () => Promise<unknown>) => {
    setError(null);
    try {
      await f();
      await refreshDmRequests();
      if (!dmRequests.value.length) onClose();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Dialog title="Message requests" onClose={onClose} wide>
      <p class="hint">
        People you share no workspace with asked to talk. They do not learn whether you declined.
      </p>
      <ErrorText error={error} />
      <ul class="plain requests">
        {dmRequests.value.map((r) => (
          <li key={r.id}>
            <h3 dir="auto">
              {r.from?.displayName ?? r.from?.username ?? 'Someone'}
              {hostOfId(r.id) && `, on ${hostOfId(r.id)}`}
            </h3>
            {(r.preview ?? []).map((m) => (
              <MessageText key={m.id} message={m} />
            ))}
            <div class="buttons">
              <button
                type="button"
                class="primary"
                onClick={() =>
                  void act(async () => {
                    const d = await gql<{ acceptDmRequest: Conversation }>(ACCEPT_DM, { id: r.id });
                    putConversations([d.acceptDmRequest]);
                    showInfo('Accepted: the conversation is in your direct messages.');
                  })
                }
              >
                Accept
              </button>
              <button type="button" onClick={() => void act(() => gql(DECLINE_DM, { id: r.id }))}>
                Decline
              </button>
              {r.from && (
                <button
                  type="button"
                  class="danger"
                  onClick={async () => {
                    const yes = await confirmAction({
                      title: 'Block this person?',
                      body: 'Neither of you can write to the other.',
                      confirm: 'Block',
                    });
                    if (yes) void act(() => gql(BLOCK_USER, { id: r.from!.id }));
                  }}
                >
                  Block
                </button>
              )}
            </div>
          </li>
        ))}
      </ul>
      {!dmRequests.value.length && <p>No requests waiting.</p>}
      <button type="button" onClick={onClose}>
        Close
      </button>
    </Dialog>
  );
}
