// Row types of the link-preview area (src/services/link-previews/).

export interface LinkPreviewTable {
  messageId: string;
  /** The link's place among the message's previewed links, from 0. */
  position: number;
  /** The link as found in the text, without credentials. */
  url: string;
  /** `page` or `image`. */
  kind: string;
  title: string | null;
  description: string | null;
  /** An absolute http(s) URL: the page's image, or the image itself. */
  imageUrl: string | null;
  siteName: string | null;
  /** The media type of an image preview. */
  mimeType: string | null;
  /** Bytes of an image preview. */
  size: number | null;
  fetchedAt: number;
}
