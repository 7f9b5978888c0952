// The attachments area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export {
  ATTACHMENT_MAX_BYTES,
  AttachmentService,
  AttachmentTypeError,
  MAX_ATTACHMENTS_PER_MESSAGE,
  attachmentPayload,
  checkAttachmentFile,
  checkFileName,
  storeAttachmentBlob,
} from './attachment-service.js';
export type { AuthorizedUpload, StoredUpload } from './attachment-service.js';
export { insertAttachment } from './queries.js';
