import { nameOf, presence } from '../state/store.ts';

const WORDS = { ONLINE: 'online', AWAY: 'away', OFFLINE: 'offline' } as const;

/** A dot for someone's presence; its words are in the label of whatever holds it. */
export function PresenceDot({ userId, labelled }: { userId: string; labelled?: boolean }) {
  const s = presence.value[userId] ?? 'OFFLINE';
  return (
    <span
      class={`presence presence-${s.toLowerCase()}`}
      role={labelled ? 'img' : undefined}
      aria-label={labelled ? `${nameOf(userId)} is ${WORDS[s]}` : undefined}
      aria-hidden={labelled ? undefined : 'true'}
      title={WORDS[s]}
    />
  );
}

export function presenceWords(userId: string): string {
  return WORDS[presence.value[userId] ?? 'OFFLINE'];
}
