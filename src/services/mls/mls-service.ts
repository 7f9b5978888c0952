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
 * One object for the edges, built from parts: `key-packages.ts`, `groups.ts` (Commits and
 * Welcomes) and `encrypted-messages.ts`, over `mls-part.ts`.
 */
export class MlsService {
  readonly publishKeyPackages: MlsKeyPackages['publishKeyPackages'];
  readonly keyPackageCounts: MlsKeyPackages['keyPackageCounts'];
  readonly claimKeyPackages: MlsKeyPackages['claimKeyPackages'];
  readonly pruneKeyPackages: MlsKeyPackages['prune'];
  readonly groupState: MlsGroups['groupState'];
  readonly commit: MlsGroups['commit'];
  readonly commits: MlsGroups['commits'];
  readonly welcomes: MlsGroups['welcomes'];
  readonly sendEncrypted: MlsMessages['sendEncrypted'];
  readonly messageInfo: MlsMessages['messageInfo'];

  constructor(deps: MlsServiceDeps) {
    const keyPackages = new MlsKeyPackages(deps);
    const groups = new MlsGroups(deps);
    const messages = new MlsMessages(deps);
    this.publishKeyPackages = keyPackages.publishKeyPackages.bind(keyPackages);
    this.keyPackageCounts = keyPackages.keyPackageCounts.bind(keyPackages);
    this.claimKeyPackages = keyPackages.claimKeyPackages.bind(keyPackages);
    this.pruneKeyPackages = keyPackages.prune.bind(keyPackages);
    this.groupState = groups.groupState.bind(groups);
    this.commit = groups.commit.bind(groups);
    this.commits = groups.commits.bind(groups);
    this.welcomes = groups.welcomes.bind(groups);
    this.sendEncrypted = messages.sendEncrypted.bind(messages);
    this.messageInfo = messages.messageInfo.bind(messages);
  }
}
