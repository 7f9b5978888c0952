// The ip-blocks area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { IpBlockService } from './ip-block-service.js';
export type { IpBlockView } from './ip-block-service.js';
