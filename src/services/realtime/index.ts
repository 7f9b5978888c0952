// The realtime area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { RealtimeService } from './realtime-service.js';
export { RelayStream } from './relay-stream.js';
export { WorkspaceStream } from './workspace-stream.js';
