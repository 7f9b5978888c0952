/**
 * Server ids (docs/federation.md, "Roles"): the `host[:port]` of a server's public URL,
 * lower-case, as `new URL(...).host` writes it. A host is a DNS name or an IPv4 address; a port
 * is 1 to 65535 without leading zeros. Anything else is refused here, before a URL is built from
 * it (a port over 65535 made `new URL()` throw while a request was being signed).
 */

const NAME_RE =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const PORT_RE = /^[1-9][0-9]{0,4}$/;

/** Whether `id` is a server id in its canonical form. */
export function isServerId(id: string): boolean {
  if (id.length > 259) return false;
  const colon = id.indexOf(':');
  const name = colon === -1 ? id : id.slice(0, colon);
  if (colon !== -1) {
    const port = id.slice(colon + 1);
    if (!PORT_RE.test(port) || Number(port) > 65535) return false;
  }
  if (!NAME_RE.test(name)) return false;
  // The URL parser reads a name whose last label is numeric as an IPv4 address (`1.2.3` is
  // 1.2.0.3, `999.1.1.1` is refused): only a name it keeps as written is an id.
  try {
    return new URL(`https://${name}/`).hostname === name;
  } catch {
    return false;
  }
}
