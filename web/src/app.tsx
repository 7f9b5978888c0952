import { useEffect } from 'preact/hooks';

import { explain } from './api/errors.ts';
import { AuthScreen } from './ui/auth-screen.tsx';
import { Shell } from './ui/shell.tsx';
import { Toasts } from './ui/toasts.tsx';
import { boot, bootError, phase } from './state/session.ts';
import { ConfirmHost } from './ui/confirm.tsx';

export function App() {
  useEffect(() => {
    void boot();
  }, []);
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
