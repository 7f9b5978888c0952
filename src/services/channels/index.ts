// The channels area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { ChannelService, normalizeChannelName } from './channel-service.js';
export type { CreateChannelInput } from './channel-service.js';
