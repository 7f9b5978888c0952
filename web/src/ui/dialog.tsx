import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { Icon } from './icons.tsx';

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
      aria-labelledby="dialog-title"
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <header class="dialog-head">
        <h2 id="dialog-title">{props.title}</h2>
        <button type="button" class="icon" aria-label="Close" onClick={props.onClose}>
          <Icon name="close" />
        </button>
      </header>
      {props.children}
    </dialog>
  );
}
