import { attachmentPayload } from '../../../services/attachments/index.js';
import type { FieldResolver, TypeResolvers } from '../../generated/resolver-types.js';

import { loadAttachments } from './loaders.js';

export const Attachment: TypeResolvers<'Attachment'> = {
  contentType: (a) => attachmentPayload(a).contentType,
  sizeBytes: (a) => attachmentPayload(a).sizeBytes,
  url: (a) => attachmentPayload(a).url,
};

/** `Message.attachments`; listed while the feature is off too (contract rule 3). */
export const messageAttachments: FieldResolver<'Message', 'attachments'> = async (
  m,
  _a,
  ctx,
  info,
) => (m.deletedAt !== null ? [] : ((await loadAttachments(ctx, info, m.id)) ?? []));
