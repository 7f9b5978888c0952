import { useEffect, useRef, useState } from 'preact/hooks';

import { pictureOf } from '../remote/host-image.ts';
import { emojiOf } from '../state/emoji.ts';

import { searchEmoji, shortName } from './emoji-data.ts';

/** One choice: a Unicode emoji, or a workspace's custom emoji (`:name:` with its picture). */
interface Choice {
  value: string;
  name: string;
  image?: string;
}

/**
 * A grid of emoji with a search box: arrows move, Enter picks, Escape closes. Focus starts in
 * the search box and returns where it was when the picker closes.
 */
export function EmojiPicker(p: {
  label: string;
  /** The workspace whose custom emoji are offered first. */
  serverId?: string | null;
  onPick: (e: string) => void;
  onClose: () => void;
}) {
  const [q, setQ] = useState('');
  const [active, setActive] = useState(0);
  const box = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const ql = q.trim().toLowerCase().replace(/^:|:$/g, '');
  const list: Choice[] = [
    ...emojiOf(p.serverId)
      .filter((e) => e.name.includes(ql))
      .map((e) => ({
        value: e.shortcode,
        name: e.name,
        image: pictureOf(e.url, p.serverId) ?? undefined,
      })),
    ...searchEmoji(q, 64).map((e) => ({ value: e[0], name: shortName(e) })),
  ];
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
      if (pick) p.onPick(pick.value);
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
            key={e.value}
            id={`emoji-${i}`}
            role="option"
            tabIndex={-1}
            aria-selected={i === active}
            aria-label={e.name.replace(/_/g, ' ')}
            title={`:${e.name}:`}
            class={i === active ? 'active' : ''}
            onClick={() => p.onPick(e.value)}
          >
            {e.image ? <img class="custom-emoji" src={e.image} alt="" /> : e.value}
          </button>
        ))}
        {!list.length && <p class="hint">No emoji by that name.</p>}
      </div>
    </div>
  );
}
