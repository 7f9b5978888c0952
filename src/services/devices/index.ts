// The devices area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export type { DeviceView } from './device-rules.js';
export { DeviceService } from './device-service.js';
export { KeyAuthService } from './key-auth-service.js';
export { KeyChallenges } from './key-challenges.js';
export { deleteDevicesOf, findCurrentKeyIdentity, setKeyPackage } from './queries.js';
