import type { MlsServiceDeps } from './mls-part.js';
import { MlsMessages } from './encrypted-messages.js';
import { MlsGroups, type MlsGroupView } from './groups.js';
import { MlsKeyPackages, type ClaimedKeyPackage } from './key-packages.js';

export {
  credentialIdentity,
  groupIdOf,
  KEY_PACKAGES_LOW,
  KEY_PACKAGE_MAX_CHARS,
} from './mls-part.js';
export type { ClaimedKeyPackage, MlsGroupView, MlsServiceDeps };

/**
 * The MLS (RFC 9420) delivery service of encrypted conversations (docs/e2ee.md): devices' key
 * packages, one group per conversation with its incarnation and epoch, Commits accepted one per
 * epoch and delivered in order with their Welcomes, and encrypted messages stored with their
 * franking tag. The server parses only what it checks and never decrypts.
 *
 * Its parts are its surface (as the command system's and moderation's are): `keyPackages`
 * (`key-packages.ts`), `groups` (Commits and Welcomes, `groups.ts`) and `messages`
 * (`encrypted-messages.ts`), over `mls-part.ts`.
 */
export class MlsService {
  readonly keyPackages: MlsKeyPackages;
  readonly groups: MlsGroups;
  readonly messages: MlsMessages;

  constructor(deps: MlsServiceDeps) {
    this.keyPackages = new MlsKeyPackages(deps);
    this.groups = new MlsGroups(deps);
    this.messages = new MlsMessages(deps);
  }
}
