/** One line of the chart: a label, the times of its events and a CSS class for its colour. */
export interface Series {
  label: string;
  times: string[];
  cls: string;
}

const DAYS = 30;

/**
 * Events per day over the last 30 days as bars, in SVG (no chart library), with the same
 * figures as a table for screen readers.
 */
export function ActivityChart({ series }: { series: Series[] }) {
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  const start = today.getTime() - (DAYS - 1) * 86_400_000;
  const counts = series.map((s) => {
    const c = new Array<number>(DAYS).fill(0);
    for (const t of s.times) {
      const i = Math.floor((Date.parse(t) - start) / 86_400_000);
      if (i >= 0 && i < DAYS) c[i]! += 1;
    }
    return c;
  });
  const max = Math.max(1, ...counts.flat());
  const w = 600;
  const h = 120;
  const slot = w / DAYS;
  const bar = (slot - 2) / series.length;
  const day = (i: number) =>
    new Date(start + i * 86_400_000).toLocaleDateString(undefined, {
      month: 'short',
      day: 'numeric',
    });
  return (
    <figure class="chart">
      <figcaption>
        Reports and blocks per day, last {DAYS} days (most in a day: {max})
      </figcaption>
      <svg
        viewBox={`0 0 ${w} ${h + 16}`}
        role="img"
        aria-label={`Bar chart of ${series.map((s) => s.label.toLowerCase()).join(' and ')} per day`}
      >
        <line x1="0" y1={h} x2={w} y2={h} class="axis" />
        {counts.map((c, si) =>
          c.map((n, i) =>
            n ? (
              <rect
                key={`${si}-${i}`}
                class={series[si]!.cls}
                x={i * slot + 1 + si * bar}
                y={h - (n / max) * h}
                width={bar}
                height={(n / max) * h}
              >
                <title>{`${day(i)}: ${n} ${series[si]!.label.toLowerCase()}`}</title>
              </rect>
            ) : null,
          ),
        )}
        <text x="0" y={h + 13} class="tick">
          {day(0)}
        </text>
        <text x={w} y={h + 13} class="tick end">
          {day(DAYS - 1)}
        </text>
      </svg>
      <ul class="plain legend">
        {series.map((s, i) => (
          <li key={s.label}>
            <span class={`swatch ${s.cls}`} aria-hidden="true" /> {s.label}:{' '}
            {counts[i]!.reduce((a, b) => a + b, 0)} in {DAYS} days
          </li>
        ))}
      </ul>
    </figure>
  );
}
