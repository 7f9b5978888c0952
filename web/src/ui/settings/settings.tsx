import { useEffect, useState } from 'preact/hooks';

import {
  APPROVE_LINK,
  BLOCKED_USERS,
  CANCEL_DELETION,
  CHANGE_PASSWORD,
  DM_SETTINGS,
  LOGOUT_OTHERS,
  MY_DEVICES,
  MY_SESSIONS,
  REQUEST_DELETION,
  REVOKE_DEVICE,
  REVOKE_SESSION,
  UNBLOCK_USER,
  UPDATE_DM_SETTINGS,
  UPDATE_PROFILE,
} from '../../api/admin-queries.ts';
import { gql } from '../../api/graphql.ts';
import { usePagedList } from '../../api/paged.ts';
import { ME, SET_PRESENCE } from '../../api/queries.ts';
import type { Me, User } from '../../api/types.ts';
import { identityBackup, storedAccounts } from '../../auth/keys.ts';
import { signOut } from '../../state/session.ts';
import { me, rememberUsers, serverInfo } from '../../state/store.ts';
import { pageTitle } from '../../state/view.ts';
import { setTheme, theme, type Theme } from '../theme.ts';
import { ErrorText, showInfo } from '../toasts.tsx';

import './avatar-setting.tsx';
import { DataExportSetting } from './data-export.tsx';
import { NotificationSettings } from './notification-settings.tsx';
import { CommandSettings } from './command-settings.tsx';
import { profileExtras } from './profile-extras.tsx';
import { PageTabs } from '../page-tabs.tsx';
import { confirmAction } from '../confirm.tsx';

const TABS: [string, string][] = [
  ['profile', 'Profile and look'],
  ['notifications', 'Notifications'],
  ['commands', 'Commands'],
  ['privacy', 'Messages and privacy'],
  ['sessions', 'Sessions'],
  ['devices', 'Devices and keys'],
  ['account', 'Account'],
];

/** The person's own settings, one tab per concern. */
export default function Settings({ tab }: { tab: string }) {
  const current = TABS.some(([id]) => id === tab) ? tab : 'profile';
  useEffect(() => {
    pageTitle.value = 'Settings';
  }, []);
  return (
    <section class="page" aria-labelledby="settings-h">
      <h1 id="settings-h">Settings</h1>
      <PageTabs
        label="Settings sections"
        tabs={TABS}
        current={current}
        route={(tab) => ({ name: 'settings', tab })}
        href={(tab) => `/settings/${tab}`}
      />
      {current === 'profile' && <Profile />}
      {current === 'notifications' && <NotificationSettings />}
      {current === 'commands' && <CommandSettings />}
      {current === 'privacy' && <Privacy />}
      {current === 'sessions' && <Sessions />}
      {current === 'devices' && <Devices />}
      {current === 'account' && <Account />}
    </section>
  );
}

function Profile() {
  const [error, setError] = useState<unknown>(null);
  const u = me.value;
  if (!u) return null;
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const displayName = String(new FormData(e.currentTarget).get('displayName') ?? '');
          gql<{ updateProfile: User }>(UPDATE_PROFILE, { input: { displayName } })
            .then((d) => {
              me.value = { ...u, ...d.updateProfile };
              rememberUsers([d.updateProfile]);
              showInfo('Saved.');
            })
            .catch(setError);
        }}
      >
        <h2>Profile</h2>
        <p>
          Username: <strong>@{u.username}</strong>
        </p>
        <label>
          Display name
          <input name="displayName" defaultValue={u.displayName ?? ''} maxLength={64} dir="auto" />
        </label>
        <ErrorText error={error} />
        <button type="submit" class="primary">
          Save
        </button>
      </form>
      {profileExtras()}
      <fieldset>
        <legend>Theme</legend>
        {(
          [
            ['system', 'As the system'],
            ['light', 'Light'],
            ['dark', 'Dark'],
          ] as [Theme, string][]
        ).map(([t, label]) => (
          <label class="check" key={t}>
            <input
              type="radio"
              name="theme"
              checked={theme.value === t}
              onChange={() => setTheme(t)}
            />
            <span>{label}</span>
          </label>
        ))}
      </fieldset>
    </>
  );
}

interface DmSettingsData {
  myDmSettings: {
    inbound: string;
    outbound: string;
    partners: string;
    outsideFloorFrom: { setting: string; excludedChoices: string[]; message: string }[];
  };
  myPresence: { choice: string; status: string };
}

const REACH: [string, string][] = [
  ['ANYONE', 'Anyone'],
  ['SHARED_WORKSPACE', 'People in a workspace with me'],
  ['CONTACTS', 'Only people I already talk with'],
];

function Privacy() {
  const [d, setD] = useState<DmSettingsData | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () => gql<DmSettingsData>(DM_SETTINGS).then(setD).catch(setError);
  useEffect(() => {
    void load();
  }, []);
  if (!d) return error ? <ErrorText error={error} /> : <p class="loading">Loading…</p>;
  const s = d.myDmSettings;
  const excluded = (setting: string, v: string) =>
    s.outsideFloorFrom.find((n) => n.setting === setting)?.excludedChoices.includes(v) ?? false;
  const save = (input: Record<string, string>) =>
    gql(UPDATE_DM_SETTINGS, { input })
      .then(() => {
        showInfo('Saved.');
        return load();
      })
      .catch(setError);
  const radios = (setting: 'INBOUND' | 'OUTBOUND', key: 'inbound' | 'outbound', legend: string) => (
    <fieldset>
      <legend>{legend}</legend>
      {REACH.map(([v, label]) => (
        <label class="check" key={v}>
          <input
            type="radio"
            name={key}
            checked={s[key] === v}
            disabled={excluded(setting, v)}
            onChange={() => void save({ [key]: v })}
          />
          <span>{label}</span>
        </label>
      ))}
      {s.outsideFloorFrom
        .filter((n) => n.setting === setting)
        .map((n) => (
          <p class="hint" key={n.setting}>
            {n.message}
          </p>
        ))}
    </fieldset>
  );
  return (
    <>
      <h2>Messages and privacy</h2>
      <ErrorText error={error} />
      {radios('INBOUND', 'inbound', 'Who may start a conversation with me')}
      {radios('OUTBOUND', 'outbound', 'Whom I may start a conversation with')}
      <fieldset>
        <legend>How others see me</legend>
        {(
          [
            ['AUTO', 'Online when I am here, away when idle'],
            ['AWAY', 'Always away'],
            ['INVISIBLE', 'Invisible (shown offline)'],
          ] as [string, string][]
        ).map(([v, label]) => (
          <label class="check" key={v}>
            <input
              type="radio"
              name="presence"
              checked={d.myPresence.choice === v}
              onChange={() => void gql(SET_PRESENCE, { choice: v }).then(load).catch(setError)}
            />
            <span>{label}</span>
          </label>
        ))}
      </fieldset>
      <BlockedPeople />
    </>
  );
}

/** People the caller blocked, most recent first, a page at a time. */
function BlockedPeople() {
  const list = usePagedList<User & { cursor: string }>(BLOCKED_USERS, 'blockedUsers', {}, 20);
  return (
    <>
      <h3>Blocked people</h3>
      <ErrorText error={list.error} />
      {!list.items ? (
        <p class="loading">Loading…</p>
      ) : !list.items.length ? (
        <p class="hint">Nobody.</p>
      ) : (
        <ul class="plain blocked-people">
          {list.items.map((u) => (
            <li key={u.id}>
              <span dir="auto">{u.displayName ?? u.username}</span>{' '}
              <button
                type="button"
                onClick={() =>
                  void gql(UNBLOCK_USER, { id: u.id }).then(list.reload).catch(list.setError)
                }
              >
                Unblock
              </button>
            </li>
          ))}
        </ul>
      )}
      {list.more && (
        <button type="button" onClick={list.loadMore}>
          Show more blocked people
        </button>
      )}
    </>
  );
}

interface SessionRow {
  id: string;
  deviceId: string | null;
  createdAt: string;
  expiresAt: string;
  ip: string | null;
  userAgent: string | null;
  current: boolean;
}

function Sessions() {
  // Newest first, 20 at a time.
  const sessions = usePagedList<SessionRow & { cursor: string }>(MY_SESSIONS, 'mySessions', {}, 20);
  const list = sessions.items;
  const [ownError, setError] = useState<unknown>(null);
  const error = ownError ?? sessions.error;
  const load = sessions.reload;
  return (
    <>
      <h2>Sessions</h2>
      <p class="hint">Every browser and app signed in to your account.</p>
      <ErrorText error={error} />
      <button
        type="button"
        onClick={() =>
          void gql<{ logoutOtherSessions: number }>(LOGOUT_OTHERS)
            .then((d) => {
              showInfo(`${d.logoutOtherSessions} other session(s) signed out.`);
              return load();
            })
            .catch(setError)
        }
      >
        Sign out every other session
      </button>
      {list && (
        <ul class="plain sessions">
          {list.map((s) => (
            <li key={s.id}>
              <strong>
                {s.current ? 'This session' : (s.userAgent ?? 'Unknown app').slice(0, 80)}
              </strong>
              <span class="muted">
                {' '}
                · since {new Date(s.createdAt).toLocaleString()}
                {s.ip && ` · ${s.ip}`} · ends {new Date(s.expiresAt).toLocaleDateString()}
              </span>{' '}
              {!s.current && (
                <button
                  type="button"
                  onClick={() => void gql(REVOKE_SESSION, { id: s.id }).then(load).catch(setError)}
                >
                  Sign out
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {sessions.more && (
        <button type="button" onClick={sessions.loadMore}>
          Show more sessions
        </button>
      )}
    </>
  );
}

interface DevicesData {
  myDevices: {
    id: string;
    name: string;
    createdAt: string;
    lastUsedAt: string | null;
    current: boolean;
  }[];
  deviceLinkOffers: {
    id: string;
    deviceName: string;
    devicePublicKey: string;
    expiresAt: string;
  }[];
  myKeyIdentity: { id: string } | null;
}

function Devices() {
  const [d, setD] = useState<DevicesData | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [backup, setBackup] = useState<string | null>(null);
  const load = () => gql<DevicesData>(MY_DEVICES).then(setD).catch(setError);
  useEffect(() => {
    void load();
    void storedAccounts().then(async (list) => {
      const mine = list.find((a) => a.username === me.value?.username.toLowerCase());
      const blob = mine ? await identityBackup(mine) : null;
      if (blob) setBackup(URL.createObjectURL(blob));
    });
  }, []);
  if (!d) return error ? <ErrorText error={error} /> : <p class="loading">Loading…</p>;
  return (
    <>
      <h2>Devices and keys</h2>
      <ErrorText error={error} />
      {d.myKeyIdentity ? (
        <p>
          Your identity key: <code>{d.myKeyIdentity.id}</code>
        </p>
      ) : (
        <p class="hint">This account signs in with a password; it has no identity key.</p>
      )}
      {backup && (
        <p>
          <a href={backup} download={`svc-identity-${me.value?.username}.json`}>
            Download a backup of your identity key
          </a>{' '}
          — keep it somewhere safe and private: with it you can recover the account if you lose
          every device.
        </p>
      )}
      <h3>Devices</h3>
      <ul class="plain">
        {d.myDevices.map((x) => (
          <li key={x.id}>
            <strong dir="auto">{x.name}</strong>
            {x.current && ' (this device)'}
            <span class="muted">
              {' '}
              · added {new Date(x.createdAt).toLocaleDateString()}
              {x.lastUsedAt && ` · last used ${new Date(x.lastUsedAt).toLocaleDateString()}`}
            </span>{' '}
            {!x.current && (
              <button
                type="button"
                class="danger"
                onClick={async () => {
                  const yes = await confirmAction({
                    title: `Revoke ${x.name}?`,
                    body: 'Its key can never sign in again.',
                    confirm: 'Revoke',
                  });
                  if (yes) void gql(REVOKE_DEVICE, { id: x.id }).then(load).catch(setError);
                }}
              >
                Revoke
              </button>
            )}
          </li>
        ))}
      </ul>
      {d.deviceLinkOffers.length > 0 && (
        <>
          <h3>Devices asking to join your account</h3>
          {d.deviceLinkOffers.map((o) => (
            <form
              key={o.id}
              onSubmit={(e) => {
                e.preventDefault();
                const code = String(new FormData(e.currentTarget).get('code'));
                gql(APPROVE_LINK, { input: { offerId: o.id, code } })
                  .then(() => {
                    showInfo('Device added.');
                    return load();
                  })
                  .catch(setError);
              }}
            >
              <p>
                <strong dir="auto">{o.deviceName}</strong> — key{' '}
                <code>{o.devicePublicKey.slice(0, 12)}…</code>
              </p>
              <label>
                The code the new device shows
                <input name="code" required autoCapitalize="characters" />
              </label>
              <button type="submit" class="primary">
                Approve
              </button>
            </form>
          ))}
        </>
      )}
    </>
  );
}

function Account() {
  const [error, setError] = useState<unknown>(null);
  const u = me.value;
  if (!u) return null;
  const refresh = () =>
    gql<{ me: Me }>(ME).then((d) => {
      me.value = d.me;
    });
  return (
    <>
      <h2>Account</h2>
      <ErrorText error={error} />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          gql(CHANGE_PASSWORD, {
            input: { currentPassword: f.get('current'), newPassword: f.get('next') },
          })
            .then(() => showInfo('Password changed; every other session was signed out.'))
            .catch(setError);
        }}
      >
        <h3>Change password</h3>
        <p class="hint">For accounts that sign in with a password.</p>
        <label>
          Current password
          <input name="current" type="password" autoComplete="current-password" required />
        </label>
        <label>
          New password
          <input name="next" type="password" autoComplete="new-password" minLength={8} required />
        </label>
        <button type="submit">Change password</button>
      </form>
      <DataExportSetting />
      <h3>Delete account</h3>
      {u.deletionScheduledFor ? (
        <>
          <p>
            Your account will be deleted on {new Date(u.deletionScheduledFor).toLocaleString()}.
          </p>
          <button
            type="button"
            onClick={() => void gql(CANCEL_DELETION).then(refresh).catch(setError)}
          >
            Keep my account
          </button>
        </>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const confirmUsername = String(new FormData(e.currentTarget).get('confirm'));
            gql(REQUEST_DELETION, { input: { confirmUsername } }).then(refresh).catch(setError);
          }}
        >
          <p class="hint">
            Every other session ends now; after{' '}
            {serverInfo.value ? 'the grace period' : 'a grace period'} the account, its messages and
            files are removed. You can cancel until then.
          </p>
          <label>
            Type your username to confirm
            <input name="confirm" required autoCapitalize="none" />
          </label>
          <button type="submit" class="danger">
            Delete my account
          </button>
        </form>
      )}
      <h3>Sign out</h3>
      <button type="button" onClick={() => void signOut().catch(setError)}>
        Sign out of this browser
      </button>
    </>
  );
}
