import { signal } from '@preact/signals';

import { ApiError, gql, postForm } from '../api/graphql.ts';
import { CREATE_ATTACHMENT, FINALIZE_ATTACHMENT } from '../api/queries.ts';
import { makeThumbnail, SEAL_OVERHEAD, sealFile } from '../e2ee/sealed-file.ts';
import type { SealedFileRef } from '../e2ee/sealed-refs.ts';

import { conversations } from './store.ts';

/** The server's upload limit (docs/files.md): checked here too, so nothing is sent in vain. */
export const MAX_UPLOAD_BYTES = 26_214_400;

/** A file chosen in a message box: uploaded at once, attached to the message once it is sent. */
export interface PendingFile {
  localId: number;
  name: string;
  size: number;
  state: 'uploading' | 'ready' | 'failed';
  attachmentId: string | null;
  error: unknown;
  done: Promise<void>;
  /** In an encrypted conversation: what the message will say of the encrypted upload. */
  sealed?: Omit<SealedFileRef, 'id'>;
}

/** Files waiting in each message box, by `conversationId:threadRootId`. */
export const pendingFiles = signal<Record<string, PendingFile[]>>({});

let nextId = 1;

function patch(key: string, localId: number, change: Partial<PendingFile>): void {
  const list = pendingFiles.value[key] ?? [];
  pendingFiles.value = {
    ...pendingFiles.value,
    [key]: list.map((f) => (f.localId === localId ? { ...f, ...change } : f)),
  };
}

/** An upload refusal in the words of docs/files.md. */
export function uploadError(err: unknown): unknown {
  if (!(err instanceof ApiError) || err.code !== 'HTTP') return err;
  const status = err.extensions.status;
  if (status === 413) {
    return new ApiError('the file is larger than 25 MB, the most this server takes', 'VALIDATION');
  }
  if (status === 415) {
    return new ApiError(
      'the server does not take this kind of file here (images, text, PDF, JSON, zip and gzip are taken; SVG is not)',
      'VALIDATION',
    );
  }
  return err;
}

/**
 * Starts the upload of each file: `createAttachment`, then `POST /api/files/upload` with the
 * token and id before the file part (docs/files.md, "The steps"). In an encrypted conversation
 * the file is encrypted here first and goes up as `encrypted.bin`, so the server learns neither
 * its name nor its type (docs/web-client-encrypted.md, "Attachments").
 */
export function addFiles(key: string, conversationId: string, files: Iterable<File>): void {
  for (const file of files) {
    const localId = nextId++;
    const name = file.name || `pasted-${localId}.${(file.type.split('/')[1] ?? 'bin').slice(0, 8)}`;
    const entry: PendingFile = {
      localId,
      name,
      size: file.size,
      state: 'uploading',
      attachmentId: null,
      error: null,
      done: Promise.resolve(),
    };
    entry.done = (async () => {
      try {
        const encrypted = conversations.value[conversationId]?.encrypted === true;
        if (file.size + (encrypted ? SEAL_OVERHEAD : 0) > MAX_UPLOAD_BYTES)
          throw uploadError(new ApiError('', 'HTTP', { status: 413 }));
        if (file.size === 0) throw new ApiError('the file is empty', 'VALIDATION');
        const [sealed, thumb] = encrypted
          ? await Promise.all([sealFile(file), makeThumbnail(file)])
          : [null, null];
        const upName = sealed ? 'encrypted.bin' : name;
        const d = await gql<{ createAttachment: { attachmentId: string; uploadToken: string } }>(
          CREATE_ATTACHMENT,
          {
            input: {
              conversationId,
              fileName: upName,
              contentType: sealed ? null : file.type || null,
            },
          },
        );
        const form = new FormData();
        form.append('upload_token', d.createAttachment.uploadToken);
        form.append('attachment_id', d.createAttachment.attachmentId);
        form.append('file', sealed?.blob ?? file, upName);
        await postForm('/api/files/upload', form);
        patch(key, localId, {
          state: 'ready',
          attachmentId: d.createAttachment.attachmentId,
          ...(sealed
            ? {
                sealed: {
                  name,
                  type: file.type || 'application/octet-stream',
                  size: file.size,
                  key: sealed.key,
                  sha256: sealed.sha256,
                  ...(thumb ? { thumb } : {}),
                },
              }
            : {}),
        });
      } catch (err) {
        patch(key, localId, { state: 'failed', error: uploadError(err) });
      }
    })();
    pendingFiles.value = {
      ...pendingFiles.value,
      [key]: [...(pendingFiles.value[key] ?? []), entry],
    };
  }
}

export function removePending(key: string, localId: number): void {
  const list = (pendingFiles.value[key] ?? []).filter((f) => f.localId !== localId);
  pendingFiles.value = { ...pendingFiles.value, [key]: list };
}

/** Whether the box has files still uploading or ready to go. */
export function hasPending(key: string): boolean {
  return (pendingFiles.value[key] ?? []).some((f) => f.state !== 'failed');
}

/**
 * Before sending: waits for the uploads still running and answers the files ready to go on the
 * message (sendMessage's `attachmentIds`; the server attaches them as it stores the message).
 * Failed files stay in the box with their reason.
 */
export async function readyFiles(key: string): Promise<PendingFile[]> {
  await Promise.all((pendingFiles.value[key] ?? []).map((f) => f.done));
  return (pendingFiles.value[key] ?? []).filter((f) => f.state === 'ready' && f.attachmentId);
}

/** The files went out on a message: they leave the box. */
export function sentFiles(key: string, sent: PendingFile[]): void {
  for (const f of sent) removePending(key, f.localId);
}

/**
 * The files' references an encrypted message carries (keys, names, hashes, images' previews
 * while they fit in `room`).
 */
export function sealedOf(files: PendingFile[], room = Infinity): SealedFileRef[] {
  // Previews go while they fit in `room` (characters of the message they may take).
  let left = room;
  return files.flatMap((f) => {
    if (!f.sealed || !f.attachmentId) return [];
    const { thumb, ...ref } = f.sealed;
    if (!thumb || thumb.length > left) return [{ id: f.attachmentId, ...ref }];
    left -= thumb.length;
    return [{ id: f.attachmentId, ...ref, thumb }];
  });
}

/**
 * Attaches files to a message sent already (`finalizeAttachment`, one by one): an encrypted
 * message cannot name them as it is sent, since the server cannot read it.
 */
export async function finalizeFiles(messageId: string, files: PendingFile[]): Promise<void> {
  for (const f of files) {
    if (f.attachmentId) {
      await gql(FINALIZE_ATTACHMENT, { input: { attachmentId: f.attachmentId, messageId } });
    }
  }
}
