import { useRef } from 'preact/hooks';

import type { Attachment } from '../api/types.ts';
import { addFiles, pendingFiles, removePending } from '../state/attachments.ts';
import { featureOn } from '../state/store.ts';

import { registerComposerAction } from './composer-actions.tsx';
import { Icon } from './icons.tsx';
import { registerPart } from './message-parts.tsx';
import { ErrorText } from './toasts.tsx';
import { hostOfId } from '../remote/routing.ts';
import { RemoteAttachment } from '../remote/remote-file.tsx';
import { EncryptedAttachments } from '../e2ee/attachment.tsx';

/** The key of a message box's files: its conversation and thread. */
export function filesKey(conversationId: string, threadRootId: string | undefined): string {
  return `${conversationId}:${threadRootId ?? ''}`;
}

/**
 * Whether files can be attached here: the feature is on (in an encrypted conversation they are
 * encrypted before upload, ../e2ee/sealed-file.ts).
 */
export function canAttach(_c: { encrypted: boolean }): boolean {
  return featureOn('attachments');
}

export function sizeWords(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function AttachButton(p: { conversationId: string; threadRootId: string | undefined }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button
        type="button"
        class="icon"
        aria-label="Attach files"
        title="Attach files (or paste or drop them)"
        onClick={() => input.current?.click()}
      >
        <Icon name="clip" />
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        aria-hidden="true"
        tabIndex={-1}
        data-testid="attach-input"
        onChange={(e) => {
          const files = e.currentTarget.files;
          if (files?.length)
            addFiles(filesKey(p.conversationId, p.threadRootId), p.conversationId, files);
          e.currentTarget.value = '';
        }}
      />
    </>
  );
}

registerComposerAction((c, threadRootId) =>
  canAttach(c) && c.isMember && !c.archived ? (
    <AttachButton key="attach" conversationId={c.id} threadRootId={threadRootId} />
  ) : null,
);

/** The files waiting in a message box: name, state, and a button to take each out. */
export function PendingFiles({ fileKey }: { fileKey: string }) {
  const list = pendingFiles.value[fileKey] ?? [];
  if (!list.length) return null;
  return (
    <ul class="plain pending-files" aria-label="Files to send">
      {list.map((f) => (
        <li key={f.localId} class={`pending ${f.state}`}>
          <span dir="auto">{f.name}</span>{' '}
          <span class="muted small">
            {sizeWords(f.size)} ·{' '}
            {f.state === 'uploading' ? 'uploading…' : f.state === 'ready' ? 'ready' : 'not sent'}
          </span>
          <button
            type="button"
            class="icon small"
            aria-label={`Remove ${f.name}`}
            onClick={() => removePending(fileKey, f.localId)}
          >
            <Icon name="close" />
          </button>
          {f.state === 'failed' && <ErrorText error={f.error} />}
        </li>
      ))}
    </ul>
  );
}

function isImage(a: Attachment): boolean {
  return /^image\/(png|jpeg|gif|webp|avif|bmp)$/.test(a.contentType);
}

// Attachments under a message: images as a preview through the download route (same origin, so
// the page's policy allows it), other files as a link with their name and size.
registerPart((m) =>
  m.ciphertext ? (
    <EncryptedAttachments m={m} />
  ) : m.attachments.length ? (
    <ul class="plain attachments" aria-label="Attachments">
      {m.attachments.map((a) => (
        <li key={a.id}>
          {hostOfId(a.id) ? (
            // A file on another server: through the relay's download route (web/src/remote).
            <RemoteAttachment a={a} host={hostOfId(a.id)!} image={isImage(a)} />
          ) : (
            <LocalAttachment a={a} />
          )}{' '}
          <span class="muted small">{sizeWords(a.sizeBytes)}</span>
        </li>
      ))}
    </ul>
  ) : null,
);

function LocalAttachment({ a }: { a: Attachment }) {
  return (
    <>
      {isImage(a) ? (
        <a href={a.url} target="_blank" rel="noopener" class="image-attachment">
          <img
            src={a.url}
            alt={a.fileName}
            loading="lazy"
            width={a.width ?? undefined}
            height={a.height ?? undefined}
          />
        </a>
      ) : null}
      <a href={a.url} download={a.fileName} class="file-attachment">
        <Icon name="clip" /> <span dir="auto">{a.fileName}</span>
      </a>
    </>
  );
}
