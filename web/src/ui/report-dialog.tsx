import { useState } from 'preact/hooks';

import { gql } from '../api/graphql.ts';
import { REPORT_MESSAGE } from '../api/queries.ts';
import type { Message } from '../api/types.ts';

import { Dialog } from './dialog.tsx';
import { ErrorText, showInfo } from './toasts.tsx';

const CATEGORIES: [string, string][] = [
  ['SPAM', 'Spam'],
  ['HARASSMENT', 'Harassment'],
  ['HATE', 'Hate'],
  ['VIOLENCE', 'Violence'],
  ['SEXUAL_CONTENT', 'Sexual content'],
  ['SELF_HARM', 'Self-harm'],
  ['ILLEGAL', 'Illegal'],
  ['IMPERSONATION', 'Impersonation'],
  ['OTHER', 'Something else'],
];

/** Reports a message to the workspace's moderators and the server operator. */
export function ReportDialog({ message, onClose }: { message: Message; onClose: () => void }) {
  const [error, setError] = useState<unknown>(null);
  // An encrypted message is reported with what this browser decrypted and its franking opening
  // key (docs/e2ee.md, "Franking"): the server checks them against the sender's commitment.
  const encrypted = Boolean(message.ciphertext);
  // An edited one is reported as its edit (the text shown), itself an encrypted message.
  const shown = message.editedBy ?? message;
  const reveal =
    encrypted && shown.body !== undefined && shown.opening !== undefined
      ? { plaintext: shown.body, opening: shown.opening }
      : null;
  return (
    <Dialog title="Report this message" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          gql(REPORT_MESSAGE, {
            id: shown.id,
            category: f.get('category'),
            text: String(f.get('text') ?? '').trim() || null,
            reveal,
          })
            .then(() => {
              showInfo(
                encrypted
                  ? 'Thank you. The moderators will see this message’s text, proven to be what its sender wrote.'
                  : 'Thank you. The moderators will look at it.',
              );
              onClose();
            })
            .catch(setError);
        }}
      >
        <fieldset>
          <legend>What is wrong with it?</legend>
          {CATEGORIES.map(([value, label], i) => (
            <label class="check" key={value}>
              <input type="radio" name="category" value={value} required defaultChecked={i === 0} />
              <span>{label}</span>
            </label>
          ))}
        </fieldset>
        <label>
          More detail (optional)
          <textarea name="text" maxLength={2000} rows={3} dir="auto" />
        </label>
        {encrypted && reveal && (
          <p class="hint">
            This conversation is end-to-end encrypted: reporting sends this message’s text to the
            moderators, with the proof that its sender wrote it. Nothing else of the conversation is
            sent.
          </p>
        )}
        {encrypted && !reveal && (
          <p class="error" role="alert">
            This browser could not read this message, so it cannot be reported with the proof of
            what it says.
          </p>
        )}
        <p class="hint">Moderators of this workspace do not see who reported it.</p>
        <ErrorText error={error} />
        <div class="buttons">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={encrypted && !reveal}>
            Report
          </button>
        </div>
      </form>
    </Dialog>
  );
}
