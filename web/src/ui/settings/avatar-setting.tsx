import { useState } from 'preact/hooks';

import { ApiError, postForm } from '../../api/graphql.ts';
import { me, rememberUsers } from '../../state/store.ts';
import { Avatar } from '../avatar.tsx';
import { ErrorText, showInfo } from '../toasts.tsx';

import { registerProfileExtra } from './profile-extras.tsx';

const MAX_BYTES = 2_097_152;
const TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** `POST /api/files/avatar` refusals (docs/files.md, "Avatars") in words. */
function avatarError(err: unknown): unknown {
  if (!(err instanceof ApiError) || err.code !== 'HTTP') return err;
  const status = err.extensions.status;
  if (status === 413)
    return new ApiError('the picture is larger than 2 MB; choose a smaller one', 'VALIDATION');
  if (status === 415) {
    return new ApiError('only PNG, JPEG, GIF or WebP pictures can be avatars', 'VALIDATION');
  }
  if (status === 400) return new ApiError('the file could not be read as a picture', 'VALIDATION');
  return err;
}

function AvatarSetting() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const u = me.value;
  if (!u) return null;
  const upload = async (file: File) => {
    setError(null);
    if (!TYPES.includes(file.type))
      return setError(avatarError(new ApiError('', 'HTTP', { status: 415 })));
    if (file.size > MAX_BYTES)
      return setError(avatarError(new ApiError('', 'HTTP', { status: 413 })));
    setBusy(true);
    try {
      const form = new FormData();
      form.append('file', file, file.name);
      const d = await postForm<{ url: string }>('/api/files/avatar', form);
      const next = { ...u, avatarUrl: d.url };
      me.value = next;
      rememberUsers([next]);
      showInfo('Your picture was saved.');
    } catch (err) {
      setError(avatarError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="avatar-setting" onSubmit={(e) => e.preventDefault()}>
      <h2>Picture</h2>
      <div class="avatar-row">
        <Avatar user={u} />
        <label>
          Choose a picture (PNG, JPEG, GIF or WebP, at most 2 MB)
          <input
            type="file"
            accept={TYPES.join(',')}
            disabled={busy}
            onChange={(e) => {
              const f = e.currentTarget.files?.[0];
              if (f) void upload(f);
              e.currentTarget.value = '';
            }}
          />
        </label>
      </div>
      <ErrorText error={error} />
    </form>
  );
}

registerProfileExtra(() => <AvatarSetting key="avatar" />);
