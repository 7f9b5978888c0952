import type { AttachmentTable } from '../../../db/tables/attachments.js';
import type { MessageTable } from '../../../db/tables/collaboration.js';
import { attachmentPayload } from '../../../services/attachments/index.js';
import type { Resolver } from '../../resolver-types.js';

import { loadAttachments } from './loaders.js';

type R = Resolver<AttachmentTable>;

export const Attachment = {
  contentType: ((a) => attachmentPayload(a).contentType) as R,
  sizeBytes: ((a) => attachmentPayload(a).sizeBytes) as R,
  url: ((a) => attachmentPayload(a).url) as R,
};

/** `Message.attachments`; listed while the feature is off too (contract rule 3). */
export const messageAttachments: Resolver<MessageTable> = async (m, _a, ctx, info) =>
  m.deletedAt !== null ? [] : ((await loadAttachments(ctx, info, m.id)) ?? []);
