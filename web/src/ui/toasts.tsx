import { signal } from '@preact/signals';

import { explain } from '../api/errors.ts';
import { Icon } from './icons.tsx';

interface Toast {
  id: number;
  what: string;
  todo: string;
  kind: 'error' | 'info';
}

const toasts = signal<Toast[]>([]);
let next = 1;

/** Shows an error in words with what to do, for a few seconds (errors stay until dismissed). */
export function showError(err: unknown): void {
  const x = explain(err);
  push({ what: x.what, todo: x.todo, kind: 'error' });
}

export function showInfo(what: string): void {
  const t = push({ what, todo: '', kind: 'info' });
  setTimeout(() => dismiss(t), 5000);
}

function push(t: Omit<Toast, 'id'>): number {
  const id = next++;
  toasts.value = [...toasts.value.slice(-3), { ...t, id }];
  return id;
}

function dismiss(id: number): void {
  toasts.value = toasts.value.filter((t) => t.id !== id);
}

/** The notices in a corner of the screen; a live region, so screen readers announce them. */
export function Toasts() {
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.value.map((t) => (
        <div key={t.id} class={`toast toast-${t.kind}`}>
          <p>
            <strong>{t.what}</strong> {t.todo}
          </p>
          <button type="button" class="icon" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            <Icon name="close" />
          </button>
        </div>
      ))}
    </div>
  );
}

/** An error shown in place (in a form or a pane), as words and a next step. */
export function ErrorText({ error, context }: { error: unknown; context?: 'signin' }) {
  if (!error) return null;
  const x = explain(error, context);
  return (
    <p class="error" role="alert">
      <strong>{x.what}</strong> {x.todo}
    </p>
  );
}
