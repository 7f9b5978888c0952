// The authz area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { Authz, PrimedFact } from './authz.js';
export { assertNotTimedOut, assertWritable } from './write-rules.js';
export type { Membership } from './write-rules.js';
