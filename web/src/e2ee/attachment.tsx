// A file of an encrypted message, under it: its name, type and size come from the decrypted
// message, never from the server. "Download" fetches the blob (`encrypted.bin`), checks its
// SHA-256 against the message's, decrypts it here and saves it under its name; an image is
// shown too once decrypted, and before that its small preview from the message (`thumb`). Nothing is fetched before the person asks, as Signal and WhatsApp
// do on a metered connection, so opening a conversation costs no downloads.
import { useEffect, useState } from 'preact/hooks';

import type { Message } from '../api/types.ts';
import { Icon } from '../ui/icons.tsx';

import { openFile } from './sealed-file.ts';
import { PREVIEW, sealedRefs, type SealedFileRef } from './sealed-refs.ts';

function sizeWords(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function EncryptedAttachments({ m }: { m: Message }) {
  const refs = sealedRefs(m.body);
  // Files the server lists that this browser has no key for (a message it cannot read).
  const unknown = m.attachments.filter((a) => !refs.some((r) => r.id === a.id));
  if (!refs.length && !unknown.length) return null;
  return (
    <ul class="plain attachments" aria-label="Attachments">
      {refs.map((r) => (
        <li key={r.id}>
          <SealedFile r={r} url={`/api/attachments/${encodeURIComponent(r.id)}/download`} />
        </li>
      ))}
      {unknown.map((a) => (
        <li key={a.id} class="muted small">
          <Icon name="lock" /> An encrypted file this browser cannot open ({sizeWords(a.sizeBytes)})
        </li>
      ))}
    </ul>
  );
}

/**
 * The files of a reported encrypted message, for those who handle the report: each blob comes
 * from the report's own route (`/api/reports/{id}/attachments/{sha256}`), checked against the
 * hash and decrypted with the key the reporter revealed with the text (docs/e2ee.md).
 */
export function ReportedAttachments({ reportId, body }: { reportId: string; body: string }) {
  const refs = sealedRefs(body);
  if (!refs.length) return null;
  return (
    <ul class="plain attachments" aria-label="Attachments">
      {refs.map((r) => (
        <li key={r.id}>
          <SealedFile
            r={r}
            url={`/api/reports/${encodeURIComponent(reportId)}/attachments/${encodeURIComponent(r.sha256)}`}
          />
        </li>
      ))}
    </ul>
  );
}

function SealedFile({ r, url }: { r: SealedFileRef; url: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [image, setImage] = useState<string | null>(null);
  useEffect(
    () => () => {
      if (image) URL.revokeObjectURL(image);
    },
    [image],
  );

  const download = async () => {
    setBusy(true);
    setError('');
    try {
      const res = await fetch(url, { credentials: 'same-origin' });
      if (!res.ok) {
        throw new Error(
          res.status === 404
            ? 'This file is not available (yet): its sender may still be sending it.'
            : `The server did not give the file (${res.status}).`,
        );
      }
      const plain = await openFile(await res.arrayBuffer(), r);
      if (PREVIEW.test(r.type)) {
        setImage(
          URL.createObjectURL(new Blob([plain as Uint8Array<ArrayBuffer>], { type: r.type })),
        );
      }
      // Saved as bytes: a decrypted document is never opened in this page's origin.
      const saved = URL.createObjectURL(
        new Blob([plain as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }),
      );
      const a = document.createElement('a');
      a.href = saved;
      a.download = r.name;
      a.click();
      setTimeout(() => URL.revokeObjectURL(saved), 60_000);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      {image ? (
        <img class="image-attachment" src={image} alt={r.name} />
      ) : (
        r.thumb && (
          <img
            class="image-attachment sealed-preview"
            src={r.thumb}
            alt={`${r.name} (preview: download to see it whole)`}
          />
        )
      )}
      <button
        type="button"
        class="file-attachment link"
        aria-label={`Download ${r.name}, encrypted`}
        disabled={busy}
        onClick={() => void download()}
      >
        <Icon name="lock" /> <span dir="auto">{r.name}</span>
      </button>{' '}
      <span class="muted small">
        {sizeWords(r.size)}
        {busy ? ' · decrypting…' : ''}
      </span>
      {error && (
        <p class="error small" role="alert">
          {error}
        </p>
      )}
    </>
  );
}
