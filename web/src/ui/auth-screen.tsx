import { useEffect, useRef, useState } from 'preact/hooks';

import { gql } from '../api/graphql.ts';
import { REQUEST_PASSWORD_RESET, RESET_PASSWORD } from '../api/queries.ts';
import {
  defaultDeviceName,
  keyLogin,
  keySignup,
  linkDevice,
  LinkEnded,
  passwordLogin,
  passwordSignup,
} from '../auth/flows.ts';
import { keySupport, storedAccounts, type StoredAccount } from '../auth/keys.ts';
import { navigate, route } from '../state/router.ts';
import { signedIn, signedOutReason } from '../state/session.ts';
import { featureOn, serverInfo } from '../state/store.ts';

import { ErrorText } from './toasts.tsx';

type Tab = 'signin' | 'signup' | 'forgot';

/** Signing in, signing up and password reset: everything a person without a session sees. */
export function AuthScreen() {
  const r = route.value;
  const invite = r.name === 'invite' ? r.token : '';
  const [tab, setTab] = useState<Tab>(invite ? 'signup' : 'signin');
  const info = serverInfo.value;
  if (r.name === 'reset') return <ResetPassword token={r.token} />;
  return (
    <main class="auth" id="main">
      <div class="auth-card">
        <h1>Welcome</h1>
        {info?.instanceNotice && (
          <p class="notice" dir="auto">
            {info.instanceNotice}
          </p>
        )}
        {signedOutReason.value && (
          <p class="notice" role="status">
            {signedOutReason.value}
          </p>
        )}
        {invite && (
          <p class="notice">
            You were invited to a workspace. Create an account, or sign in, to join it.
          </p>
        )}
        <div class="tabs" role="tablist" aria-label="Sign in or create an account">
          <TabButton id="signin" current={tab} set={setTab} label="Sign in" />
          <TabButton id="signup" current={tab} set={setTab} label="Create account" />
          {featureOn('email') && (
            <TabButton id="forgot" current={tab} set={setTab} label="Forgot password" />
          )}
        </div>
        <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
          {tab === 'signin' && <SignIn />}
          {tab === 'signup' && <SignUp invite={invite} />}
          {tab === 'forgot' && <Forgot />}
        </div>
      </div>
    </main>
  );
}

function TabButton(p: { id: Tab; current: Tab; set: (t: Tab) => void; label: string }) {
  return (
    <button
      type="button"
      role="tab"
      id={`tab-${p.id}`}
      aria-selected={p.current === p.id}
      aria-controls={`panel-${p.id}`}
      class={p.current === p.id ? 'tab current' : 'tab'}
      onClick={() => p.set(p.id)}
    >
      {p.label}
    </button>
  );
}

function SignIn() {
  const [accounts, setAccounts] = useState<StoredAccount[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    void storedAccounts().then(setAccounts);
  }, []);
  const run = async (f: () => Promise<{ csrfToken: string }>) => {
    setBusy(true);
    setError(null);
    try {
      await signedIn(await f());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div>
      {accounts.length > 0 && (
        <section aria-labelledby="keys-h">
          <h2 id="keys-h">Accounts on this device</h2>
          <ul class="plain">
            {accounts.map((a) => (
              <li key={a.username}>
                <button
                  type="button"
                  class="primary wide"
                  disabled={busy}
                  onClick={() => void run(() => keyLogin(a))}
                >
                  Sign in as {a.username} with this device’s key
                </button>
              </li>
            ))}
          </ul>
          <p class="hint">Or sign in with a password:</p>
        </section>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          void run(() => passwordLogin(String(f.get('username')), String(f.get('password'))));
        }}
      >
        <label>
          Username
          <input name="username" autoComplete="username" required autoCapitalize="none" />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <ErrorText error={error} context="signin" />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <LinkDevice />
    </div>
  );
}

/** A key account signed in elsewhere adds this browser as a new device. */
function LinkDevice() {
  const [open, setOpen] = useState(false);
  const [code, setCode] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [ended, setEnded] = useState<string | null>(null);
  const gone = useRef(false);
  useEffect(
    () => () => {
      gone.current = true;
    },
    [],
  );
  if (!open) {
    return (
      <p class="hint">
        Your account uses a key on another device?{' '}
        <button type="button" class="link" onClick={() => setOpen(true)}>
          Add this browser to it
        </button>
      </p>
    );
  }
  return (
    <form
      aria-labelledby="link-h"
      onSubmit={(e) => {
        e.preventDefault();
        const username = String(new FormData(e.currentTarget).get('username')).trim();
        setError(null);
        setEnded(null);
        linkDevice(
          username,
          defaultDeviceName(),
          (c) => setCode(c),
          () => gone.current,
        )
          .then(signedIn)
          .catch((err) => {
            setCode(null);
            if (err instanceof LinkEnded) setEnded(err.state);
            else setError(err);
          });
      }}
    >
      <h2 id="link-h">Add this browser to your account</h2>
      {code ? (
        <div role="status">
          <p>
            On a device where you are signed in, open Settings → Devices and keys, and type this
            code:
          </p>
          <p class="code" aria-label={`Code ${code.split('').join(' ')}`}>
            {code}
          </p>
          <p class="hint">Waiting for the approval… (the code works for ten minutes)</p>
        </div>
      ) : (
        <>
          <label>
            Username
            <input name="username" required autoCapitalize="none" autoComplete="username" />
          </label>
          {ended && (
            <p class="error" role="alert">
              <strong>
                The request {ended === 'EXPIRED' ? 'expired' : 'was cancelled'} before it was
                approved.
              </strong>{' '}
              Ask again and approve it within ten minutes.
            </p>
          )}
          <ErrorText error={error} />
          <button type="submit">Ask to add this browser</button>
        </>
      )}
    </form>
  );
}

function SignUp({ invite }: { invite: string }) {
  const info = serverInfo.value;
  const [keysOk, setKeysOk] = useState<boolean | null>(null);
  const [usePassword, setUsePassword] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [progress, setProgress] = useState<string | null>(null);
  useEffect(() => {
    void keySupport().then(setKeysOk);
  }, []);
  if (!info) return null;
  const passwordAllowed = !info.signupRequiresKeys;
  const password = usePassword || (keysOk === false && passwordAllowed);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        const input = {
          username: String(f.get('username') ?? '').trim(),
          displayName: String(f.get('displayName') ?? ''),
          inviteToken: String(f.get('invite') ?? invite),
          acceptedTerms: f.get('terms') === 'on',
          password: String(f.get('password') ?? ''),
          email: String(f.get('email') ?? ''),
          deviceName: defaultDeviceName(),
        };
        setError(null);
        setProgress('Preparing…');
        const onWork = (tried: number, bits: number) =>
          setProgress(
            `Proving this is not a bulk signup: ${tried.toLocaleString()} of about ${(2 ** bits).toLocaleString()} tries…`,
          );
        void (password ? passwordSignup(input, onWork) : keySignup(input, onWork))
          .then(signedIn)
          .catch(setError)
          .finally(() => setProgress(null));
      }}
    >
      {!info.openRegistration && !invite && (
        <p class="hint">This server needs an invite to create an account.</p>
      )}
      {keysOk === false && !passwordAllowed && (
        <p class="error" role="alert">
          This browser cannot create the Ed25519 device key this server requires. Use a current
          version of Chrome, Edge, Firefox or Safari.
        </p>
      )}
      <label>
        Username
        <input
          name="username"
          autoComplete="username"
          required
          minLength={2}
          maxLength={32}
          pattern="[A-Za-z0-9]([A-Za-z0-9._\-]*[A-Za-z0-9])?"
          aria-describedby="username-rule"
          autoCapitalize="none"
        />
      </label>
      <p class="hint" id="username-rule">
        2 to 32 letters, digits, dots, dashes or underscores.
      </p>
      <label>
        Display name (optional, any language)
        <input name="displayName" maxLength={64} dir="auto" />
      </label>
      {password && (
        <>
          <label>
            Password
            <input
              name="password"
              type="password"
              autoComplete="new-password"
              minLength={8}
              required
            />
          </label>
          <label>
            Email (optional, for password reset)
            <input name="email" type="email" autoComplete="email" />
          </label>
        </>
      )}
      {(!info.openRegistration || invite) && (
        <label>
          Invite code
          <input name="invite" defaultValue={invite} required={!info.openRegistration} />
        </label>
      )}
      {info.termsUrl && (
        <label class="check">
          <input type="checkbox" name="terms" required />
          <span>
            I accept the{' '}
            <a href={info.termsUrl} target="_blank" rel="noopener noreferrer">
              terms of this server
            </a>
          </span>
        </label>
      )}
      {!password && (
        <p class="hint">
          Your account gets a key kept in this browser; you sign in with it, no password needed.
          Download a backup of it from Settings afterwards.
        </p>
      )}
      {passwordAllowed && keysOk && (
        <label class="check">
          <input
            type="checkbox"
            checked={usePassword}
            onChange={(e) => setUsePassword(e.currentTarget.checked)}
          />
          <span>Use a password instead of a key</span>
        </label>
      )}
      <ErrorText error={error} />
      {progress && (
        <p role="status" class="hint">
          {progress}
        </p>
      )}
      <button
        type="submit"
        class="primary"
        disabled={progress !== null || (keysOk === false && !passwordAllowed)}
      >
        Create account
      </button>
    </form>
  );
}

function Forgot() {
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (sent) {
    return (
      <p role="status">
        If an account matches, a mail with a reset link is on its way. Open the link within an hour.
      </p>
    );
  }
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        const v = String(new FormData(e.currentTarget).get('who'));
        gql(REQUEST_PASSWORD_RESET, { input: { emailOrUsername: v } })
          .then(() => setSent(true))
          .catch(setError);
      }}
    >
      <label>
        Email address or username
        <input name="who" required autoCapitalize="none" />
      </label>
      <ErrorText error={error} />
      <button type="submit" class="primary">
        Send reset link
      </button>
    </form>
  );
}

function ResetPassword({ token }: { token: string }) {
  const [done, setDone] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <main class="auth" id="main">
      <div class="auth-card">
        <h1>Choose a new password</h1>
        {done ? (
          <>
            <p role="status">Your password is changed, and every session of the account ended.</p>
            <button type="button" class="primary" onClick={() => navigate({ name: 'home' })}>
              Sign in
            </button>
          </>
        ) : (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const f = new FormData(e.currentTarget);
              if (f.get('password') !== f.get('again')) {
                setError(new Error('mismatch'));
                return;
              }
              gql(RESET_PASSWORD, { input: { token, newPassword: String(f.get('password')) } })
                .then(() => setDone(true))
                .catch(setError);
            }}
          >
            <label>
              New password
              <input
                name="password"
                type="password"
                autoComplete="new-password"
                minLength={8}
                required
              />
            </label>
            <label>
              The same again
              <input
                name="again"
                type="password"
                autoComplete="new-password"
                minLength={8}
                required
              />
            </label>
            {error instanceof Error && error.message === 'mismatch' ? (
              <p class="error" role="alert">
                <strong>The two passwords differ.</strong> Type the same password twice.
              </p>
            ) : (
              <ErrorText error={error} />
            )}
            <button type="submit" class="primary">
              Set password
            </button>
          </form>
        )}
      </div>
    </main>
  );
}
