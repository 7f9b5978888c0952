// The principals area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { accountNotBlocked, blockedRefusal, findBlocks, isAccountBlocked } from './blocked.js';
export { parsePrincipal, principalIdsOfAccount, remoteUsernameKey } from './principal-id.js';
export type { ParsedPrincipal } from './principal-id.js';
