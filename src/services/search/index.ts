// The search area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { analyzeText } from './analyze.js';
export { deferMessageTerms, insertMessageTerms, messageTerms } from './queries.js';
export { HeldTerms } from './held-terms.js';
export { SearchService } from './search-service.js';
export type { SearchOrder } from './search-service.js';
