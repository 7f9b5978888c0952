// The plugins area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { BUNDLE_MAX_BYTES, BUNDLE_MEDIA_TYPE } from './bundle-schema.js';
export { BundleRefusal } from './bundle.js';
export { PluginService } from './plugin-service.js';
export type { WorkspacePluginView } from './plugin-service.js';
