import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Icon } from './icons.tsx';

let dialogs = 0;

/**
 * A modal dialog on the native <dialog> element: focus moves into it, Escape closes it, and
 * focus returns to where it was.
 */
export function Dialog(props: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // Dialogs can stack (a confirmation over a settings dialog): each names its own title.
  const [titleId] = useState(() => `dialog-title-${++dialogs}`);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    const back = document.activeElement as HTMLElement | null;
    d.showModal();
    return () => {
      d.close();
      back?.focus?.();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class={props.wide ? 'dialog wide' : 'dialog'}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <header class="dialog-head">
        <h2 id={titleId}>{props.title}</h2>
        <button type="button" class="icon" aria-label="Close" onClick={props.onClose}>
          <Icon name="close" />
        </button>
      </header>
      {props.children}
    </dialog>
  );
}
