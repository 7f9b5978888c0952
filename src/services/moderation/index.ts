// The moderation area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { ModerationService } from './moderation-service.js';
export type { PrincipalBlockView } from './principal-blocks.js';
export type { ReportView } from './reports.js';
