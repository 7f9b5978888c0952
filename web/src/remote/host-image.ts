import { signal } from '@preact/signals';

import { hostOfId } from './routing.ts';
import { remoteDownload } from './relay.ts';

// Pictures a host serves (a person's avatar, a workspace's custom emoji) are paths on the host,
// `/api/files/...`. The page cannot point an <img> at them (the path would name this server) nor
// at the relay's route (each request needs this device's signature and the answer is checked),
// so it fetches them through the relay's download route, checks them as files are
// (remote-file.tsx) and shows them from a blob: address. Each picture is fetched once per page
// load: a list of fifty messages by one person of a host asks for their avatar once.

/** A fetched picture's blob: address by "<host> <path>", or false when it could not be had. */
const pictures = signal<Record<string, string | false>>({});
const asked = new Set<string>();

/** The only paths a host's picture may have: its image route, never another of its routes. */
const PICTURE_PATH = /^\/api\/files\/[A-Za-z0-9/_.-]+$/;

function fetchPicture(host: string, path: string, key: string): void {
  asked.add(key);
  remoteDownload(host, path)
    .then((blob) => {
      if (!asked.has(key)) return;
      if (!blob.type.startsWith('image/')) throw new Error('not an image');
      pictures.value = { ...pictures.value, [key]: URL.createObjectURL(blob) };
    })
    .catch(() => {
      if (asked.has(key)) pictures.value = { ...pictures.value, [key]: false };
    });
}

/**
 * Where an <img> finds a picture named by `url`: the path itself for this server's own, a blob:
 * address once a host's has been fetched and checked, null while it is on its way or when it
 * could not be had (the caller shows the initials or the `:name:` instead). Read during render,
 * so the component draws again when the picture arrives.
 */
export function pictureSrc(url: string | null | undefined, host: string | null): string | null {
  if (!url?.startsWith('/')) return null;
  if (!host) return url;
  if (!PICTURE_PATH.test(url)) return null;
  const key = `${host} ${url}`;
  const got = pictures.value[key];
  if (got !== undefined) return got || null;
  if (!asked.has(key)) fetchPicture(host, url, key);
  return null;
}

/** `pictureSrc` for a picture of the workspace, conversation or person with this id. */
export function pictureOf(url: string | null | undefined, ownerId: string | null | undefined) {
  return pictureSrc(url, hostOfId(ownerId));
}

/** Lets go of every fetched picture (at sign-out). */
export function forgetPictures(): void {
  for (const src of Object.values(pictures.value)) if (src) URL.revokeObjectURL(src);
  asked.clear();
  pictures.value = {};
}
