// The messages area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { MessageService } from './message-service.js';
export { NewestPages } from './newest-pages.js';
export {
  deleteReactionsBy,
  insertMessages,
  insertPins,
  insertReactions,
  recountThreads,
} from './queries.js';
export { MessageRemover } from './removal.js';
export type { MessageRemoval, MessageRemovalHook } from './removal.js';
export { ENCRYPTION_FRAMING_BYTES } from './sending.js';
export { checkEmoji, parseMentions, readMentions } from './text.js';
export type { MessageEditView, MessageView } from './views.js';
