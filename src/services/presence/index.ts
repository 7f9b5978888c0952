// The presence area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { PresenceService } from './presence-service.js';
export type { PresenceChoice, PresenceTimings } from './presence-service.js';
export { findPresenceAudience } from './queries.js';
export { TypingService } from './typing-service.js';
