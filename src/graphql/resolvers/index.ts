import { mergeResolvers, type Resolvers } from '../resolver-types.js';

import { accountDeletionResolvers } from './account-deletion/index.js';
import { accountResolvers } from './accounts/index.js';
import { channelResolvers } from './channels/index.js';
import { conversationResolvers } from './conversations/index.js';
import { deviceResolvers } from './devices/index.js';
import { dmResolvers } from './dm/index.js';
import { fileResolvers } from './files/index.js';
import { dataExportResolvers } from './data-export/index.js';
import { emojiResolvers } from './emoji/index.js';
import { foundationResolvers } from './foundation/index.js';
import { messageResolvers } from './messages/index.js';
import { pluginResolvers } from './plugins/index.js';
import { workspaceResolvers } from './workspaces/index.js';
import { moderationResolvers } from './moderation/index.js';
import { realtimeResolvers } from './realtime/index.js';
import { searchResolvers } from './search/index.js';
import { commandResolvers } from './commands/index.js';
import { mlsResolvers } from './mls/index.js';
import { notificationResolvers } from './notifications/index.js';
import { federationResolvers } from './federation/index.js';

/** Every area's resolvers. An area adds one line here. */
export function allResolvers(): Resolvers {
  return mergeResolvers(
    foundationResolvers,
    accountResolvers,
    deviceResolvers,
    accountDeletionResolvers,
    workspaceResolvers,
    channelResolvers,
    moderationResolvers,
    conversationResolvers,
    messageResolvers,
    dmResolvers,
    realtimeResolvers,
    emojiResolvers,
    dataExportResolvers,
    searchResolvers,
    fileResolvers,
    pluginResolvers,
    commandResolvers,
    mlsResolvers,
    notificationResolvers,
    federationResolvers,
  );
}
