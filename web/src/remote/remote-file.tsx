import { useEffect, useState } from 'preact/hooks';

import { explainLine } from '../api/errors.ts';
import type { Attachment } from '../api/types.ts';
import { Icon } from '../ui/icons.tsx';

import { remoteDownload } from './relay.ts';

// A file of a message in a workspace on another server. The page cannot point an <img> or a link
// at the relay's download route (each request needs this device's signature and the host's
// signed answer is checked), so it fetches the bytes and shows them from a blob: address.

function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function RemoteAttachment({
  a,
  host,
  image,
}: {
  a: Attachment;
  host: string;
  image: boolean;
}) {
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!image) return;
    let gone = false;
    let made: string | null = null;
    remoteDownload(host, a.url)
      .then((blob) => {
        if (gone) return;
        made = URL.createObjectURL(blob);
        setSrc(made);
      })
      .catch((err: unknown) => !gone && setError(err));
    return () => {
      gone = true;
      if (made) URL.revokeObjectURL(made);
    };
  }, [host, a.url, image]);
  return (
    <>
      {image && src ? (
        <a href={src} target="_blank" rel="noopener" class="image-attachment">
          <img
            src={src}
            alt={a.fileName}
            width={a.width ?? undefined}
            height={a.height ?? undefined}
          />
        </a>
      ) : null}
      <a
        href={a.url}
        class="file-attachment"
        onClick={(e) => {
          e.preventDefault();
          remoteDownload(host, a.url)
            .then((blob) => saveBlob(blob, a.fileName))
            .catch(setError);
        }}
      >
        <Icon name="clip" /> <span dir="auto">{a.fileName}</span>
      </a>
      {error ? (
        <span class="error small" role="alert">
          {' '}
          {explainLine(error)}
        </span>
      ) : null}
    </>
  );
}
