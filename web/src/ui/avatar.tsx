import type { User } from '../api/types.ts';
import { pictureOf } from '../remote/host-image.ts';
import { userOf } from '../state/store.ts';

function initialOf(name: string): string {
  return (Array.from(name.trim())[0] ?? '?').toUpperCase();
}

/**
 * A person's picture (`User.avatarUrl`: served by this server, or by the host a person of another
 * server's workspace was read from, fetched through the relay), or the first letter of their
 * name. Decorative: the name is always written beside it.
 */
export function Avatar({ user, small }: { user: User | null; small?: boolean }) {
  const known = user ? userOf(user.id).value : undefined;
  const url = known?.avatarUrl !== undefined ? known.avatarUrl : user?.avatarUrl;
  const name = user ? (user.displayName ?? user.username) : '?';
  const cls = small ? 'avatar small' : 'avatar';
  const src = pictureOf(url, user?.id);
  return src ? (
    <img class={cls} src={src} alt="" aria-hidden="true" loading="lazy" />
  ) : (
    <span class={cls} aria-hidden="true">
      {initialOf(name)}
    </span>
  );
}
