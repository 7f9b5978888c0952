import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { ErrorText } from './toasts.tsx';

/** A screen whose code loads the first time it is shown (a separate file of the build). */
export function lazyScreen<P extends object>(
  load: () => Promise<{ default: ComponentType<P> }>,
): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  return function Lazy(props: P) {
    const [, setTick] = useState(0);
    const [error, setError] = useState<unknown>(null);
    useEffect(() => {
      if (loaded) return;
      load()
        .then((m) => {
          loaded = m.default;
          setTick(1);
        })
        .catch(() => setError(new Error('load')));
    }, []);
    if (error) return <ErrorText error={error} />;
    const C = loaded;
    return C ? <C {...props} /> : <p class="loading">Loading…</p>;
  };
}
