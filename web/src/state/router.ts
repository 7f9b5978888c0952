import { signal } from '@preact/signals';

// Client-side routes over the history API. The server answers index.html on each of these
// prefixes (src/http/routes/web-client.ts, WEB_CLIENT_PATHS).

export type Route =
  | { name: 'home' }
  | { name: 'workspace'; serverId: string; conversationId: string | null }
  | { name: 'settings'; tab: string }
  | { name: 'admin'; tab: string }
  | { name: 'invite'; token: string }
  | { name: 'reset'; token: string };

export function parse(loc: { pathname: string; search: string }): Route {
  const parts = loc.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const [head, a, b] = parts;
  if (head === 'w' && a) return { name: 'workspace', serverId: a, conversationId: b ?? null };
  if (head === 'settings') return { name: 'settings', tab: a ?? 'profile' };
  if (head === 'admin') return { name: 'admin', tab: a ?? 'reports' };
  if (head === 'invite' && a) return { name: 'invite', token: a };
  if (head === 'reset-password') {
    return { name: 'reset', token: new URLSearchParams(loc.search).get('token') ?? '' };
  }
  return { name: 'home' };
}

export function href(r: Route): string {
  const enc = encodeURIComponent;
  switch (r.name) {
    case 'workspace':
      return `/w/${enc(r.serverId)}${r.conversationId ? `/${enc(r.conversationId)}` : ''}`;
    case 'settings':
      return `/settings/${enc(r.tab)}`;
    case 'admin':
      return `/admin/${enc(r.tab)}`;
    case 'invite':
      return `/invite/${enc(r.token)}`;
    case 'reset':
      return `/reset-password?token=${enc(r.token)}`;
    default:
      return '/';
  }
}

export const route = signal<Route>(parse(location));

export function navigate(r: Route, opts: { replace?: boolean } = {}): void {
  const url = href(r);
  if (url !== location.pathname + location.search) {
    if (opts.replace) history.replaceState(null, '', url);
    else history.pushState(null, '', url);
  }
  route.value = r;
}

addEventListener('popstate', () => {
  route.value = parse(location);
});
