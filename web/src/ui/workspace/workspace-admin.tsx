import { useEffect, useState } from 'preact/hooks';

import {
  CLEAR_TIMEOUT,
  CREATE_INVITE,
  INVITES,
  REMOVE_MEMBER,
  RESOLVE_WORKSPACE_REPORT,
  REVOKE_INVITE,
  SET_ROLE,
  TIMEOUT,
  WORKSPACE_REPORTS,
} from '../../api/admin-queries.ts';
import { gql } from '../../api/graphql.ts';
import { usePagedList } from '../../api/paged.ts';
import { LEAVE_WORKSPACE, MEMBERS } from '../../api/queries.ts';
import type { Role, WorkspaceInvite, WorkspaceMember } from '../../api/types.ts';
import { navigate } from '../../state/router.ts';
import { unfollow } from '../../state/session.ts';
import { featureOn, me, rememberUsers, workspaces } from '../../state/store.ts';
import { Avatar } from '../avatar.tsx';
import { Dialog } from '../dialog.tsx';
import { ErrorText, showError, showInfo } from '../toasts.tsx';

import { EmojiSettings } from './emoji-settings.tsx';
import { PluginSettings } from './plugin-settings.tsx';
import { WorkspaceCommands } from '../settings/command-settings.tsx';
import { ReportList, type Report } from './report-list.tsx';
import { WorkspaceSettings } from './workspace-settings.tsx';
import { confirmAction } from '../confirm.tsx';

const RANK: Record<Role, number> = { OWNER: 3, MODERATOR: 2, MEMBER: 1, GUEST: 0 };
const ROLE_WORDS: Record<Role, string> = {
  OWNER: 'Owner',
  MODERATOR: 'Moderator',
  MEMBER: 'Member',
  GUEST: 'Guest',
};

/** Members and roles, invites, timeouts and the report queue of one workspace. */
export function WorkspaceAdmin(p: { serverId: string; tab: string; onClose: () => void }) {
  const [tab, setTab] = useState(p.tab);
  const w = workspaces.value.find((x) => x.id === p.serverId);
  if (!w) return null;
  const staff = w.myRole === 'OWNER' || w.myRole === 'MODERATOR';
  const tabs: [string, string][] = [
    ['members', 'Members'],
    ['invites', 'Invites'],
    ['commands', 'Commands'],
    ...(staff
      ? ([
          ['reports', 'Reports'],
          ['settings', 'Settings'],
        ] as [string, string][])
      : []),
    ...(staff && featureOn('custom_emoji')
      ? ([['emoji', 'Custom emoji']] as [string, string][])
      : []),
    ...(staff && featureOn('workspace_plugins')
      ? ([['plugins', 'Plugins']] as [string, string][])
      : []),
  ];
  return (
    <Dialog title={w.name} onClose={p.onClose} wide>
      <div class="tabs" role="tablist" aria-label="Workspace">
        {tabs.map(([id, label]) => (
          <button
            key={id}
            type="button"
            role="tab"
            id={`wtab-${id}`}
            aria-selected={tab === id}
            aria-controls={`wpanel-${id}`}
            class={tab === id ? 'tab current' : 'tab'}
            onClick={() => setTab(id)}
          >
            {label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`wpanel-${tab}`} aria-labelledby={`wtab-${tab}`}>
        {tab === 'members' && <Members serverId={w.id} myRole={w.myRole ?? 'GUEST'} />}
        {tab === 'invites' && (
          <Invites serverId={w.id} staff={staff} guest={w.myRole === 'GUEST'} />
        )}
        {tab === 'reports' && <Reports serverId={w.id} />}
        {tab === 'settings' && <WorkspaceSettings w={w} onClose={p.onClose} />}
        {tab === 'emoji' && <EmojiSettings serverId={w.id} />}
        {tab === 'plugins' && <PluginSettings serverId={w.id} />}
        {tab === 'commands' && <WorkspaceCommands serverId={w.id} canManage={staff} />}
      </div>
      {w.myRole !== 'OWNER' && (
        <p>
          <button
            type="button"
            class="danger"
            onClick={async () => {
              const yes = await confirmAction({
                title: `Leave ${w.name}?`,
                body: 'You need a new invite to come back.',
                confirm: 'Leave',
              });
              if (!yes) return;
              gql(LEAVE_WORKSPACE, { serverId: w.id })
                .then(() => {
                  unfollow(w.id);
                  workspaces.value = workspaces.value.filter((x) => x.id !== w.id);
                  p.onClose();
                  navigate({ name: 'home' });
                })
                .catch(showError);
            }}
          >
            Leave workspace
          </button>
        </p>
      )}
    </Dialog>
  );
}

function Members({ serverId, myRole }: { serverId: string; myRole: Role }) {
  const [list, setList] = useState<WorkspaceMember[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    gql<{ workspace: { members: { items: WorkspaceMember[] } } }>(MEMBERS, { serverId })
      .then((d) => {
        setList(d.workspace.members.items);
        rememberUsers(d.workspace.members.items.map((m) => m.user));
      })
      .catch(setError);
  useEffect(() => {
    void load();
  }, [serverId]);
  const act = (f: () => Promise<unknown>, done: string) =>
    f()
      .then(() => {
        showInfo(done);
        return load();
      })
      .catch(setError);
  if (!list) return error ? <ErrorText error={error} /> : <p class="loading">Loading…</p>;
  const myId = me.value?.id;
  return (
    <>
      <ErrorText error={error} />
      <table class="members-table">
        <caption class="visually-hidden">Members of the workspace</caption>
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">Role</th>
            <th scope="col">Timeout</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.map((m) => {
            const name = m.user.displayName ?? m.user.username;
            const outranked = RANK[myRole] > RANK[m.role] && RANK[myRole] >= RANK.MODERATOR;
            const timedOut = m.timedOutUntil && new Date(m.timedOutUntil) > new Date();
            return (
              <tr key={m.user.id}>
                <td class="person">
                  <Avatar user={m.user} small /> <span dir="auto">{name}</span>{' '}
                  <span class="muted">@{m.user.username}</span>
                </td>
                <td>
                  {outranked && m.user.id !== myId ? (
                    <select
                      aria-label={`Role of ${name}`}
                      value={m.role}
                      onChange={(e) =>
                        void act(
                          () =>
                            gql(SET_ROLE, {
                              input: { serverId, userId: m.user.id, role: e.currentTarget.value },
                            }),
                          `${name} is now ${ROLE_WORDS[e.currentTarget.value as Role]}.`,
                        )
                      }
                    >
                      {(['MODERATOR', 'MEMBER', 'GUEST'] as Role[])
                        .filter((r) => RANK[r] < RANK[myRole])
                        .map((r) => (
                          <option key={r} value={r}>
                            {ROLE_WORDS[r]}
                          </option>
                        ))}
                    </select>
                  ) : (
                    ROLE_WORDS[m.role]
                  )}
                </td>
                <td>{timedOut ? `until ${new Date(m.timedOutUntil!).toLocaleString()}` : '—'}</td>
                <td class="row-actions">
                  {outranked && m.user.id !== myId && (
                    <>
                      {timedOut ? (
                        <button
                          type="button"
                          onClick={() =>
                            void act(
                              () => gql(CLEAR_TIMEOUT, { serverId, userId: m.user.id }),
                              `${name}'s timeout ended.`,
                            )
                          }
                        >
                          End timeout
                        </button>
                      ) : (
                        <TimeoutButton
                          name={name}
                          onPick={(minutes) =>
                            void act(
                              () => gql(TIMEOUT, { serverId, userId: m.user.id, minutes }),
                              `${name} is timed out.`,
                            )
                          }
                        />
                      )}
                      <button
                        type="button"
                        class="danger"
                        onClick={async () => {
                          const yes = await confirmAction({
                            title: `Remove ${name} from the workspace?`,
                            body: 'They can come back only with a new invite.',
                            confirm: 'Remove',
                          });
                          if (yes) {
                            void act(
                              () => gql(REMOVE_MEMBER, { serverId, userId: m.user.id }),
                              `${name} was removed.`,
                            );
                          }
                        }}
                      >
                        Remove
                      </button>
                    </>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

const DURATIONS: [number, string][] = [
  [5, '5 minutes'],
  [60, '1 hour'],
  [24 * 60, '1 day'],
  [7 * 24 * 60, '1 week'],
];

function TimeoutButton({ name, onPick }: { name: string; onPick: (minutes: number) => void }) {
  const [minutes, setMinutes] = useState(60);
  return (
    <span class="timeout">
      <select
        aria-label={`How long to time out ${name}`}
        value={minutes}
        onChange={(e) => setMinutes(Number(e.currentTarget.value))}
      >
        {DURATIONS.map(([m, label]) => (
          <option key={m} value={m}>
            {label}
          </option>
        ))}
      </select>
      <button type="button" onClick={() => onPick(minutes)}>
        Time out
      </button>
    </span>
  );
}

function Invites({ serverId, staff, guest }: { serverId: string; staff: boolean; guest: boolean }) {
  const invites = usePagedList<WorkspaceInvite & { cursor: string }>(
    INVITES,
    'workspaceInvites',
    { serverId },
    20,
  );
  const list = invites.items;
  const [created, setCreated] = useState<{ link: string; token: string; mailed: boolean } | null>(
    null,
  );
  const [ownError, setError] = useState<unknown>(null);
  const error = ownError ?? invites.error;
  const load = invites.reload;
  if (guest) return <p>Guests cannot invite people. Ask a member.</p>;
  const absolute = (link: string) => (link.startsWith('/') ? `${location.origin}${link}` : link);
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const uses = Number(f.get('uses'));
          gql<{ createWorkspaceInvite: { link: string; token: string; mailed: boolean } }>(
            CREATE_INVITE,
            {
              input: {
                serverId,
                role: staff ? f.get('role') : 'MEMBER',
                expiresInHours: Number(f.get('hours')),
                maxUses: uses > 0 ? uses : null,
                email: String(f.get('email') ?? '').trim() || null,
              },
            },
          )
            .then((d) => {
              setCreated(d.createWorkspaceInvite);
              return load();
            })
            .catch(setError);
        }}
      >
        <div class="row">
          <label>
            Valid for
            <select name="hours" defaultValue="168">
              <option value="24">1 day</option>
              <option value="168">7 days</option>
              <option value="720">30 days</option>
            </select>
          </label>
          <label>
            Uses (0 = as many as allowed)
            <input name="uses" type="number" min={0} max={1000} defaultValue="0" />
          </label>
          {staff && (
            <label>
              Joins as
              <select name="role" defaultValue="MEMBER">
                <option value="MEMBER">Member</option>
                <option value="GUEST">Guest</option>
              </select>
            </label>
          )}
        </div>
        <label>
          Also mail it to (optional)
          <input name="email" type="email" />
        </label>
        <button type="submit" class="primary">
          Create invite link
        </button>
      </form>
      <ErrorText error={error} />
      {created && (
        <div class="created" role="status">
          <p>
            Share this link{created.mailed ? ' (it was also mailed)' : ''}. It is shown only now.
          </p>
          <input
            readOnly
            value={absolute(created.link)}
            aria-label="Invite link"
            onFocus={(e) => e.currentTarget.select()}
          />
          <button
            type="button"
            onClick={() =>
              void navigator.clipboard
                ?.writeText(absolute(created.link))
                .then(() => showInfo('Copied.'))
                .catch(() => showInfo('Select the link and copy it.'))
            }
          >
            Copy
          </button>
        </div>
      )}
      <h3>Invites that can still be used</h3>
      {!list ? (
        <p class="loading">Loading…</p>
      ) : !list.length ? (
        <p class="hint">None.</p>
      ) : (
        <ul class="plain invites">
          {list.map((i) => (
            <li key={i.id}>
              {i.email ?? 'Link'} · {ROLE_WORDS[i.role]} · used {i.uses}
              {i.maxUses ? ` of ${i.maxUses}` : ''}
              {i.expiresAt && ` · until ${new Date(i.expiresAt).toLocaleDateString()}`}{' '}
              <button
                type="button"
                onClick={() => void gql(REVOKE_INVITE, { id: i.id }).then(load).catch(setError)}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
      {invites.more && (
        <button type="button" onClick={invites.loadMore}>
          Show more invites
        </button>
      )}
    </>
  );
}

function Reports({ serverId }: { serverId: string }) {
  // Oldest first, as the server keeps them: the first page is the longest-waiting reports.
  const reports = usePagedList<Report & { cursor: string }>(
    WORKSPACE_REPORTS,
    'workspaceReports',
    { serverId, openOnly: true },
    20,
  );
  if (reports.error) return <ErrorText error={reports.error} />;
  if (!reports.items) return <p class="loading">Loading…</p>;
  return (
    <>
      <ReportList
        reports={reports.items}
        empty="No open reports. Reports of messages in this workspace come here."
        resolve={(id) => gql(RESOLVE_WORKSPACE_REPORT, { id }).then(reports.reload)}
      />
      {reports.more && (
        <button type="button" onClick={reports.loadMore}>
          Show more reports
        </button>
      )}
    </>
  );
}
