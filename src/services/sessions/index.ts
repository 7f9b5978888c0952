// The sessions area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { deleteSessionsOf } from './queries.js';
export { SessionService } from './session-service.js';
export type {
  DeviceUseHook,
  IssuedSession,
  ResolvedSession,
  SessionView,
} from './session-service.js';
