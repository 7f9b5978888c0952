// The files area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export { BlobStore, BlobTooLargeError, isSha256 } from './blob-store.js';
export type { StagedBlob } from './blob-store.js';
export { checkStoredType, isAllowedAttachmentType, normalizeType } from './content-type.js';
export { FileStorage } from './file-storage.js';
export { AVATAR_MAX_SIDE, MAX_INPUT_PIXELS, reencodeImage } from './image-reencode.js';
export {
  IMAGE_EXTENSIONS,
  UploadRefused,
  imagePath,
  imagePathsOf,
  imageUrl,
  namesOfImagePaths,
  openBlobNoFollow,
  parseImagePath,
  receiveToTemp,
  storeReencodedImage,
} from './uploads.js';
export type { StoredImage, TempUpload } from './uploads.js';
