import { signal } from '@preact/signals';
import type { ComponentChildren } from 'preact';

import { Dialog } from './dialog.tsx';

interface Asking {
  title: string;
  body: ComponentChildren;
  confirm: string;
  danger: boolean;
  answer: (yes: boolean) => void;
}

const asking = signal<Asking | null>(null);

/**
 * Asks the person to confirm an action in the app's own dialog (a modal `<dialog>`: focus moves
 * to the safe choice, Escape or Cancel says no, the screen reader reads the title and the
 * question). Resolves to whether they confirmed. Replaces the browser's `confirm()`.
 */
export function confirmAction(opts: {
  title: string;
  body?: ComponentChildren;
  confirm: string;
  danger?: boolean;
}): Promise<boolean> {
  asking.value?.answer(false);
  return new Promise((resolve) => {
    asking.value = {
      title: opts.title,
      body: opts.body ?? null,
      confirm: opts.confirm,
      danger: opts.danger ?? true,
      answer: (yes) => {
        asking.value = null;
        resolve(yes);
      },
    };
  });
}

/** Where the confirmation shows; mounted once beside the toasts. */
export function ConfirmHost() {
  const a = asking.value;
  if (!a) return null;
  return (
    <Dialog title={a.title} onClose={() => a.answer(false)}>
      <div class="confirm">
        {a.body && <p class="confirm-body">{a.body}</p>}
        <div class="buttons">
          <button type="button" autoFocus onClick={() => a.answer(false)}>
            Cancel
          </button>
          <button
            type="button"
            class={a.danger ? 'danger' : 'primary'}
            onClick={() => a.answer(true)}
          >
            {a.confirm}
          </button>
        </div>
      </div>
    </Dialog>
  );
}
