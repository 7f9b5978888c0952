// The mls area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { verifyReveal } from './franking.js';
export { KEY_PACKAGES_LOW, MlsService } from './mls-service.js';
