// The link-previews area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { LinkPreviewService } from './link-preview-service.js';
export type { LinkPreviewView } from './link-preview-service.js';
