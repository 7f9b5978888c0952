import type { Resolvers } from '../../resolver-types.js';

import { messageAttachments } from './attachment-type.js';
import { createAttachment } from './create-attachment.js';
import { deleteAttachment } from './delete-attachment.js';
import { finalizeAttachment } from './finalize-attachment.js';

export const fileResolvers: Resolvers = {
  Mutation: { createAttachment, finalizeAttachment, deleteAttachment },
  Message: { attachments: messageAttachments },
};
