/**
 * The packaged desktop app's fixed origins, accepted from any server without configuration:
 * its custom scheme on `localhost`, and http and https on its own host name.
 */
export const DESKTOP_APP_ORIGINS = [
  'svc-desktop://localhost',
  'http://svc-desktop.localhost',
  'https://svc-desktop.localhost',
] as const;

const DEFAULT_PORTS: Record<string, string> = {
  'http:': '80',
  'https:': '443',
  'ws:': '80',
  'wss:': '443',
};

/**
 * Canonical form of an origin for comparison: lower case, default port dropped. Null when the
 * value is not an origin (`null`, paths, garbage).
 */
export function canonicalOrigin(value: string): string | null {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.toLowerCase() === 'null') return null;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return null;
  }
  const scheme = url.protocol.toLowerCase();
  const host = url.hostname.toLowerCase();
  if (!host) return null;
  const port = url.port && url.port !== DEFAULT_PORTS[scheme] ? `:${url.port}` : '';
  return `${scheme}//${host}${port}`;
}

export interface OriginPolicy {
  /** The configured own origin (SVC_PUBLIC_BASE_URL), or null to use the request's. */
  publicOrigin: string | null;
  extraOrigin: string | null;
}

export function buildOriginPolicy(
  publicBaseUrl: string | null,
  corsAllowedOrigin: string | null,
): OriginPolicy {
  return {
    publicOrigin: publicBaseUrl ? canonicalOrigin(publicBaseUrl) : null,
    extraOrigin: corsAllowedOrigin ? canonicalOrigin(corsAllowedOrigin) : null,
  };
}

const DESKTOP = new Set(DESKTOP_APP_ORIGINS.map((o) => canonicalOrigin(o) as string));

/** Whether `origin` may call the API, given the origin the request itself addressed. */
export function originAllowed(
  policy: OriginPolicy,
  origin: string,
  requestOrigin: string | null,
): boolean {
  const canonical = canonicalOrigin(origin);
  if (!canonical) return false;
  const own = policy.publicOrigin ?? (requestOrigin ? canonicalOrigin(requestOrigin) : null);
  return canonical === own || canonical === policy.extraOrigin || DESKTOP.has(canonical);
}
