import { useEffect, useState } from 'preact/hooks';

import { disablePush, enablePush, pushState, readPushState } from '../../state/push.ts';
import { ErrorText, showInfo } from '../toasts.tsx';

/**
 * Push notifications on this browser: the button that asks the browser's permission (only when
 * pressed), or how to turn them off, or why they cannot be had here. `compact` shows only the
 * offer, for the inbox, and nothing once push is on, blocked or unsupported.
 */
export function PushOffer({ compact = false }: { compact?: boolean }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    void readPushState();
  }, []);
  const s = pushState.value;
  const run = (f: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setError(null);
    f()
      .then(() => pushState.value === 'blocked' || showInfo(done))
      .catch(setError)
      .finally(() => setBusy(false));
  };
  if (compact && s !== 'off') return null;
  return (
    <div class={compact ? 'push-offer compact' : 'push-offer'}>
      {s === 'unsupported' && (
        <p class="hint">This browser cannot show notifications while the app is closed.</p>
      )}
      {s === 'blocked' && (
        <p class="hint">
          Notifications are blocked for this site in the browser. Allow them in the site settings
          (the icon left of the address), then come back here.
        </p>
      )}
      {s === 'off' && (
        <p>
          {compact ? 'Get notified on this device when you are away. ' : ''}
          <button
            type="button"
            class={compact ? undefined : 'primary'}
            disabled={busy}
            onClick={() => run(enablePush, 'Notifications are on for this browser.')}
          >
            Turn on notifications on this browser
          </button>
        </p>
      )}
      {s === 'on' && (
        <p>
          This browser shows your notifications while you are away (no open svc tab).{' '}
          <button
            type="button"
            disabled={busy}
            onClick={() => run(disablePush, 'Notifications are off for this browser.')}
          >
            Turn off on this browser
          </button>
        </p>
      )}
      <ErrorText error={error} />
    </div>
  );
}
