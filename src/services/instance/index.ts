// The instance area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { getServerKey, lockInstance, replaceServerKey } from './queries.js';
export {
  checkServerKeys,
  loadOrCreateServerKeys,
  loadOrCreateVapidKeys,
  rawEd25519Public,
  signBytes,
  signingKeyCreatedAt,
  verifyWithRawPublic,
} from './server-keys.js';
export type { KeyCheck, ServerKeys, VapidKeys } from './server-keys.js';
