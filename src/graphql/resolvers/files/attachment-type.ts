import type { AttachmentTable } from '../../../db/tables/attachments.js';
import type { MessageTable } from '../../../db/tables/collaboration.js';
import type { Resolver } from '../../resolver-types.js';

import { loadAttachments } from './loaders.js';

type R = Resolver<AttachmentTable>;

export const Attachment = {
  contentType: ((a) => a.contentType ?? 'application/octet-stream') as R,
  sizeBytes: ((a) => Number(a.sizeBytes ?? 0)) as R,
  url: ((a) => `/api/attachments/${a.id}/download`) as R,
};

/** `Message.attachments`; listed while the feature is off too (contract rule 3). */
export const messageAttachments: Resolver<MessageTable> = async (m, _a, ctx, info) =>
  m.deletedAt !== null ? [] : ((await loadAttachments(ctx, info, m.id)) ?? []);
