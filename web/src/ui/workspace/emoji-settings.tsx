import { useState } from 'preact/hooks';

import { gql } from '../../api/graphql.ts';
import { CREATE_CUSTOM_EMOJI, DELETE_CUSTOM_EMOJI } from '../../api/queries.ts';
import type { CustomEmoji } from '../../api/types.ts';
import { pictureOf } from '../../remote/host-image.ts';
import { customEmoji, emojiOf, loadCustomEmoji } from '../../state/emoji.ts';
import { ErrorText, showInfo } from '../toasts.tsx';
import { confirmAction } from '../confirm.tsx';

const MAX_BYTES = 262_144;
const TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** The file's bytes as standard base64, as `createCustomEmoji` takes them. */
function base64Of(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ''));
    r.onerror = () => reject(r.error ?? new Error('unreadable'));
    r.readAsDataURL(file);
  });
}

/** The workspace's custom emoji, added and removed by its Moderators and owner. */
export function EmojiSettings({ serverId }: { serverId: string }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const list = emojiOf(serverId);
  const set = (next: CustomEmoji[]) =>
    (customEmoji.value = { ...customEmoji.value, [serverId]: next });
  const add = async (form: HTMLFormElement) => {
    const f = new FormData(form);
    const file = f.get('image');
    const name = String(f.get('name') ?? '').trim();
    setError(null);
    if (!(file instanceof File) || !file.size) return setError(new Error('no file'));
    if (!TYPES.includes(file.type)) {
      return setError(Object.assign(new Error(), { what: 'type' }));
    }
    if (file.size > MAX_BYTES) return setError(Object.assign(new Error(), { what: 'size' }));
    setBusy(true);
    try {
      const d = await gql<{ createCustomEmoji: CustomEmoji }>(CREATE_CUSTOM_EMOJI, {
        input: { serverId, name, contentType: file.type, image: await base64Of(file) },
      });
      set([...list, d.createCustomEmoji].sort((a, b) => a.name.localeCompare(b.name)));
      form.reset();
      showInfo(`${d.createCustomEmoji.shortcode} was added.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const local = error instanceof Error && 'what' in error ? (error as { what: string }).what : null;
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void add(e.currentTarget);
        }}
      >
        <h3>Add a custom emoji</h3>
        <p class="hint">
          A PNG, JPEG, GIF or WebP image of at most 256 KB; it is shown at most 128 pixels wide.
          People write it as <code>:name:</code>.
        </p>
        <label>
          Name
          <input
            name="name"
            required
            minLength={2}
            maxLength={32}
            pattern="[A-Za-z0-9_+\-]+"
            title="2 to 32 letters, digits, _, + or -"
          />
        </label>
        <label>
          Image
          <input name="image" type="file" required accept={TYPES.join(',')} />
        </label>
        {local === 'type' && (
          <p class="error" role="alert">
            Only PNG, JPEG, GIF or WebP images can be emoji. Convert the image and try again.
          </p>
        )}
        {local === 'size' && (
          <p class="error" role="alert">
            The image is larger than 256 KB. Make it smaller and try again.
          </p>
        )}
        {!local && <ErrorText error={error} />}
        <button type="submit" class="primary" disabled={busy}>
          Add emoji
        </button>
      </form>
      <h3>Emoji of this workspace</h3>
      {!list.length && <p class="hint">None yet.</p>}
      <ul class="plain emoji-admin" aria-label="Custom emoji">
        {list.map((e) => (
          <li key={e.id}>
            <EmojiPicture url={e.url} serverId={serverId} /> <code>{e.shortcode}</code>
            <button
              type="button"
              class="small"
              aria-label={`Remove ${e.shortcode}`}
              onClick={async () => {
                const yes = await confirmAction({
                  title: `Remove ${e.shortcode}?`,
                  body: 'Messages keep its name as text.',
                  confirm: 'Remove',
                });
                if (!yes) return;
                gql(DELETE_CUSTOM_EMOJI, { serverId, name: e.name })
                  .then(() => set(list.filter((x) => x.id !== e.id)))
                  .catch(setError);
              }}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      <button type="button" class="link" onClick={() => void loadCustomEmoji(serverId)}>
        Reload the list
      </button>
    </>
  );
}

/** An emoji's picture in the list (a workspace of another server's fetched through the relay). */
function EmojiPicture({ url, serverId }: { url: string; serverId: string }) {
  const src = pictureOf(url, serverId);
  return src ? <img class="custom-emoji" src={src} alt="" /> : null;
}
