import type { FieldResolver } from '../../generated/resolver-types.js';

import { loadAttachments } from './loaders.js';

// Attachment's fields are the service's view (attachmentPayload); only the message's list loads.

/** `Message.attachments`; listed while the feature is off too (contract rule 3). */
export const messageAttachments: FieldResolver<'Message', 'attachments'> = async (
  m,
  _a,
  ctx,
  info,
) => (m.deletedAt !== null ? [] : ((await loadAttachments(ctx, info, m.id)) ?? []));
