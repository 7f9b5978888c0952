// The audit area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { AuditLog } from './audit-log.js';
export type { AuditView } from './audit-log.js';
export { AUDIT_PAGE_MAX } from './audit-page.js';
