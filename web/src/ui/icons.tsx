// Small line icons drawn in SVG (no icon font: every glyph renders whatever fonts the system
// has). Decorative: the button or link holding one carries the words.

const PATHS: Record<string, string> = {
  mail: 'M3 6h18v12H3z M3 7l9 6 9-6',
  plus: 'M12 5v14 M5 12h14',
  gear: 'M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6z M12 2v3 M12 19v3 M2 12h3 M19 12h3 M4.9 4.9l2.1 2.1 M17 17l2.1 2.1 M4.9 19.1 7 17 M17 7l2.1-2.1',
  out: 'M10 4H5v16h5 M14 8l4 4-4 4 M18 12H9',
  flag: 'M5 21V4 M5 4h11l-2 4 2 4H5',
  menu: 'M4 6h16 M4 12h16 M4 18h16',
  close: 'M6 6l12 12 M18 6 6 18',
  smile: 'M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18z M8.5 14.5c1.8 2 5.2 2 7 0 M9 9.5h.01 M15 9.5h.01',
  reply: 'M9 14 4 9l5-5 M4 9h10a6 6 0 0 1 6 6v5',
  edit: 'M4 20h4L19 9l-4-4L4 16z M13.5 6.5l4 4',
  pin: 'M9 4h6l-1 6 3 3H7l3-3z M12 13v8',
  trash: 'M4 7h16 M9 7V4h6v3 M6 7l1 13h10l1-13',
  warn: 'M12 3 2 21h20z M12 10v5 M12 18h.01',
  hash: 'M5 9h14 M5 15h14 M10 4 8 20 M16 4l-2 16',
  lock: 'M6 11h12v9H6z M8 11V8a4 4 0 0 1 8 0v3',
  clip: 'M21 11.5 12.5 20a5 5 0 0 1-7-7L14 4.5a3.5 3.5 0 0 1 5 5L10.5 18a2 2 0 0 1-3-3L15 7.5',
  eye: 'M2 12s3.6-7 10-7 10 7 10 7-3.6 7-10 7S2 12 2 12z M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6z',
  search: 'M11 4a7 7 0 1 0 0 14 7 7 0 0 0 0-14z M20 20l-4-4',
  bell: 'M6 16v-5a6 6 0 0 1 12 0v5l2 2H4z M10 20a2 2 0 0 0 4 0',
  muted: 'M6 16v-5a6 6 0 0 1 12 0v5l2 2H4z M10 20a2 2 0 0 0 4 0 M3 3l18 18',
  globe:
    'M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18z M3 12h18 M12 3c2.5 2.5 3.8 5.5 3.8 9s-1.3 6.5-3.8 9 M12 3C9.5 5.5 8.2 8.5 8.2 12s1.3 6.5 3.8 9',
  people:
    'M9 11a3 3 0 1 0 0-6 3 3 0 0 0 0 6z M3 20c0-3.5 2.7-6 6-6s6 2.5 6 6 M16 5a3 3 0 0 1 0 6 M17 14c2.5.5 4 2.8 4 6',
};

export function Icon({ name }: { name: keyof typeof PATHS | string }) {
  return (
    <svg
      class="i"
      viewBox="0 0 24 24"
      width="18"
      height="18"
      aria-hidden="true"
      focusable="false"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
    >
      <path d={PATHS[name] ?? ''} />
    </svg>
  );
}
