import { AreaPart, type AreaDeps } from '../area-deps.js';

import type { DirectMessaging } from './dm-port.js';

/** What the conversations area is built from (build-services.ts). */
export interface ConversationServiceDeps extends AreaDeps {
  /** The DM rules: settings, blocks, requests (dm-port.ts). */
  dm: DirectMessaging;
}

/** A part of the conversations area. */
export abstract class ConversationPart extends AreaPart<ConversationServiceDeps> {}
