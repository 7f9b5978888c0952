import { useEffect } from 'preact/hooks';

import { explain } from './api/errors.ts';
import { ApiError, NETWORK } from './api/graphql.ts';
import { AuthScreen } from './ui/auth-screen.tsx';
import { Shell } from './ui/shell.tsx';
import { Toasts } from './ui/toasts.tsx';
import { boot, bootError, phase } from './state/session.ts';
import { ConfirmHost } from './ui/confirm.tsx';

export function App() {
  useEffect(() => {
    void boot();
  }, []);
  if (bootError.value instanceof ApiError && bootError.value.code === NETWORK) return <Offline />;
  if (bootError.value) {
    const x = explain(bootError.value);
    return (
      <main class="auth" id="main">
        <div class="auth-card" role="alert">
          <h1>Cannot start</h1>
          <p>
            <strong>{x.what}</strong> {x.todo}
          </p>
          <button type="button" class="primary" onClick={() => void boot()}>
            Try again
          </button>
        </div>
      </main>
    );
  }
  if (phase.value === 'booting') {
    return (
      <main class="auth" id="main" aria-busy="true">
        <p class="loading">Loading…</p>
      </main>
    );
  }
  return (
    <>
      {phase.value === 'in' ? <Shell /> : <AuthScreen />}
      <Toasts />
      <ConfirmHost />
    </>
  );
}

/**
 * Started without a network (the service worker served the page) or with the server out of
 * reach: says so, and starts again by itself as soon as the connection is back.
 */
function Offline() {
  useEffect(() => {
    let wait = 2000;
    let timer: ReturnType<typeof setTimeout>;
    const again = () => {
      timer = setTimeout(() => {
        void boot();
        wait = Math.min(wait * 2, 30_000);
        again();
      }, wait);
    };
    again();
    const online = () => void boot();
    addEventListener('online', online);
    return () => {
      clearTimeout(timer);
      removeEventListener('online', online);
    };
  }, []);
  return (
    <main class="auth" id="main">
      <div class="auth-card">
        <h1>Offline</h1>
        <p role="status">
          <strong>Offline, reconnecting…</strong> The server cannot be reached from here. The app
          starts by itself as soon as the connection is back.
        </p>
        <button type="button" class="primary" onClick={() => void boot()}>
          Try now
        </button>
      </div>
    </main>
  );
}
