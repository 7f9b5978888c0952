import type { Resolvers } from '../../resolver-types.js';

import { addChannelMembers } from './add-channel-members.js';
import { archiveChannel } from './archive-channel.js';
import { channels } from './channels.js';
import { createChannel } from './create-channel.js';
import { joinChannel } from './join-channel.js';
import { leaveChannel } from './leave-channel.js';
import { removeChannelMember } from './remove-channel-member.js';
import { renameChannel } from './rename-channel.js';
import { setChannelTopic } from './set-channel-topic.js';
import { unarchiveChannel } from './unarchive-channel.js';

export const channelResolvers: Resolvers = {
  Query: { channels },
  Mutation: {
    createChannel,
    renameChannel,
    setChannelTopic,
    archiveChannel,
    unarchiveChannel,
    joinChannel,
    leaveChannel,
    addChannelMembers,
    removeChannelMember,
  },
};
