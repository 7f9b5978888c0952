import { navigate, type Route } from '../state/router.ts';

/** The section links of a page (settings, administration): real links, the current one marked. */
export function PageTabs(p: {
  label: string;
  tabs: [string, string][];
  current: string;
  route: (tab: string) => Route;
  href: (tab: string) => string;
}) {
  return (
    <nav aria-label={p.label}>
      <ul class="plain page-tabs">
        {p.tabs.map(([id, label]) => (
          <li key={id}>
            <a
              href={p.href(id)}
              aria-current={p.current === id ? 'page' : undefined}
              onClick={(e) => {
                e.preventDefault();
                navigate(p.route(id));
              }}
            >
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
