import { AreaPart, type AreaDeps } from '../area-deps.js';
import type { DmService } from '../dm/dm-service.js';

/** What the conversations area is built from (build-services.ts). */
export interface ConversationServiceDeps extends AreaDeps {
  dm: DmService;
}

/** A part of the conversations area. */
export abstract class ConversationPart extends AreaPart<ConversationServiceDeps> {}
