// The dm area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { DmService } from './dm-service.js';
export type { DmSettingsView } from './dm-service.js';
export { deleteDmRowsOf } from './queries.js';
export type { DmRequestView } from './views.js';
