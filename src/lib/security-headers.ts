// The headers every HTTP response of svc carries (docs/security.md, "Security headers"). A route
// that sets one itself keeps its own value (the web client's page: `Referrer-Policy: same-origin`
// beside its Content-Security-Policy).

/** On every response: no MIME sniffing, no framing, no Referer leaving with a link. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
});

/**
 * HSTS while the public address is https: browsers then refuse plain http to this host for a
 * year. No `includeSubDomains`: other hosts under the same name are not svc's to decide.
 */
export const HSTS_VALUE = 'max-age=31536000';

/** The headers for a server whose public address is `publicBaseUrl`. */
export function securityHeaders(publicBaseUrl: string | null): Record<string, string> {
  return publicBaseUrl?.startsWith('https://')
    ? { ...SECURITY_HEADERS, 'strict-transport-security': HSTS_VALUE }
    : { ...SECURITY_HEADERS };
}
