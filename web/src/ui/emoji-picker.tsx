import { useEffect, useRef, useState } from 'preact/hooks';

import { searchEmoji, shortName } from './emoji-data.ts';

/**
 * A grid of emoji with a search box: arrows move, Enter picks, Escape closes. Focus starts in
 * the search box and returns where it was when the picker closes.
 */
export function EmojiPicker(p: {
  label: string;
  onPick: (e: string) => void;
  onClose: () => void;
}) {
  const [q, setQ] = useState('');
  const [active, setActive] = useState(0);
  const box = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const list = searchEmoji(q, 64);
  useEffect(() => {
    const back = document.activeElement as HTMLElement | null;
    input.current?.focus();
    const outside = (e: PointerEvent) => {
      if (box.current && !box.current.contains(e.target as Node)) p.onClose();
    };
    document.addEventListener('pointerdown', outside);
    return () => {
      document.removeEventListener('pointerdown', outside);
      back?.focus?.();
    };
  }, []);
  const cols = 8;
  const key = (e: KeyboardEvent) => {
    const moves: Record<string, number> = {
      ArrowRight: 1,
      ArrowLeft: -1,
      ArrowDown: cols,
      ArrowUp: -cols,
    };
    if (e.key in moves) {
      e.preventDefault();
      setActive(Math.max(0, Math.min(list.length - 1, active + (moves[e.key] as number))));
    } else if (e.key === 'Enter') {
      e.preventDefault();
      const pick = list[active];
      if (pick) p.onPick(pick[0]);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      p.onClose();
    }
  };
  return (
    <div class="popover emoji-picker" ref={box} role="dialog" aria-label={p.label} onKeyDown={key}>
      <input
        ref={input}
        type="search"
        placeholder="Search emoji"
        aria-label="Search emoji"
        aria-controls="emoji-grid"
        aria-activedescendant={list[active] ? `emoji-${active}` : undefined}
        value={q}
        onInput={(e) => {
          setQ(e.currentTarget.value);
          setActive(0);
        }}
      />
      <div id="emoji-grid" class="emoji-grid" role="listbox" aria-label="Emoji">
        {list.map((e, i) => (
          <button
            type="button"
            key={e[0]}
            id={`emoji-${i}`}
            role="option"
            tabIndex={-1}
            aria-selected={i === active}
            aria-label={shortName(e).replace(/_/g, ' ')}
            title={`:${shortName(e)}:`}
            class={i === active ? 'active' : ''}
            onClick={() => p.onPick(e[0])}
          >
            {e[0]}
          </button>
        ))}
        {!list.length && <p class="hint">No emoji by that name.</p>}
      </div>
    </div>
  );
}
