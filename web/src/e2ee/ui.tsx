// What a person sees of encryption: the lock on a conversation, an invitation with accept and
// decline, and adding people to an encrypted group. The cryptography loads on demand (./glue.ts).
import { useState } from 'preact/hooks';

import { gql } from '../api/graphql.ts';
import { CONVERSATION } from '../api/queries.ts';
import type { Conversation, User } from '../api/types.ts';
import { navigate } from '../state/router.ts';
import { dropConversation, nameOf, putConversations, titleOf } from '../state/store.ts';
import { conversationTimeline } from '../state/timeline.ts';
import { Dialog } from '../ui/dialog.tsx';
import { Icon } from '../ui/icons.tsx';
import { PeoplePicker } from '../ui/people-picker.tsx';
import { ErrorText } from '../ui/toasts.tsx';

import { e2ee, groupsHere } from './glue.ts';

const ACCEPT = `mutation AcceptConversationInvite($s: ID!, $c: ID!) {
  acceptConversationInvite(serverId: $s, conversationId: $c) { ${CONVERSATION} } }`;
const DECLINE = `mutation DeclineConversationInvite($s: ID!, $c: ID!) {
  declineConversationInvite(serverId: $s, conversationId: $c) }`;
const ADD = `mutation AddConversationMembers($i: AddConversationMembersInput!) {
  addConversationMembers(input: $i) { ${CONVERSATION} members { id username displayName avatarUrl } } }`;

/** The lock beside an encrypted conversation's name, with its meaning in words. */
export function Lock({ words = 'End-to-end encrypted' }: { words?: string }) {
  return (
    <span class="e2ee-lock" title={words}>
      <Icon name="lock" />
      <span class="visually-hidden">{words}</span>
    </span>
  );
}

/**
 * A line under the header of an encrypted conversation: what the server can and cannot see,
 * whether this browser is in the group yet, and a warning when the group's devices and the
 * server's list of them differ (someone may read along without the server showing it).
 */
export function EncryptedNote({ conversationId }: { conversationId: string }) {
  const here = groupsHere.value[conversationId];
  const state = !here ? 'unknown' : !here.joined ? 'waiting' : 'in';
  const odd = here ? here.unlisted.length + here.missing.length : 0;
  return (
    <>
      <p class="topic e2ee-note" data-state={state}>
        <Icon name="lock" /> End-to-end encrypted: only the devices in this conversation can read
        its messages.{' '}
        {state === 'waiting'
          ? 'This browser is waiting to be added by the device of someone in the conversation; you will read what is sent after that.'
          : 'You read what was sent after this browser joined.'}
      </p>
      {here && odd > 0 && (
        <p class="topic e2ee-mismatch" role="alert">
          <Icon name="warn" /> Check who can read this conversation: the devices its encryption
          holds differ from the server’s list
          {here.unlisted.length > 0 &&
            ` (${countDevices(here.unlisted.length)} can read it that the server does not list)`}
          {here.missing.length > 0 &&
            ` (${countDevices(here.missing.length)} the server lists cannot read it)`}
          . Compare devices with the others before you write anything sensitive.
        </p>
      )}
    </>
  );
}

const countDevices = (n: number) => (n === 1 ? '1 device' : `${n} devices`);

/**
 * An invitation to an encrypted conversation not accepted yet: nothing of it can be read until
 * then. Accepting sets this browser up for encryption when it is not (asking first), and a
 * member's device then adds it.
 */
export function Invitation({ c }: { c: Conversation }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const act = async (accept: boolean) => {
    setBusy(true);
    setError(null);
    try {
      if (accept) {
        await (await e2ee()).ensureDevice(true);
        const d = await gql<{ acceptConversationInvite: Conversation }>(ACCEPT, {
          s: c.serverId,
          c: c.id,
        });
        putConversations([d.acceptConversationInvite]);
        void conversationTimeline(c.id).open();
      } else {
        await gql(DECLINE, { s: c.serverId, c: c.id });
        dropConversation(c.id);
        navigate({ name: 'workspace', serverId: c.serverId, conversationId: null });
      }
    } catch (err) {
      if (!(err instanceof Error && err.name === 'NotSetUp')) setError(err);
    } finally {
      setBusy(false);
    }
  };
  const people = c.memberIds.map(nameOf).join(', ');
  return (
    <div class="empty invitation">
      <h2>
        <Lock /> You are invited to an encrypted conversation
      </h2>
      <p dir="auto">
        {titleOf(c)}, with {people || 'its members'}. Nothing of it can be read until you accept;
        you will read the messages sent after that, not the ones before.
      </p>
      <ErrorText error={error} />
      <div class="row">
        <button type="button" class="primary" disabled={busy} onClick={() => void act(true)}>
          Accept
        </button>
        <button type="button" disabled={busy} onClick={() => void act(false)}>
          Decline
        </button>
      </div>
    </div>
  );
}

/** Adds people to an encrypted group: those with a device are added to its MLS group at once. */
export function AddPeople({
  c,
  people,
  onClose,
}: {
  c: Conversation;
  people: User[] | null;
  onClose: () => void;
}) {
  const [picked, setPicked] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(null);
  const add = async () => {
    try {
      const d = await gql<{ addConversationMembers: Conversation }>(ADD, {
        i: { conversationId: c.id, memberIds: picked },
      });
      putConversations([d.addConversationMembers]);
      if (c.encrypted) await (await e2ee()).sync(c.id);
      onClose();
    } catch (err) {
      setError(err);
    }
  };
  const shown = (people ?? []).filter(
    (u) => !c.memberIds.includes(u.id) && !(c.pendingMemberIds ?? []).includes(u.id),
  );
  return (
    <Dialog title={`Add people to ${titleOf(c)}`} onClose={onClose}>
      {!people && <p class="loading">Loading people…</p>}
      {people && !shown.length && <p class="hint">Everyone you share a workspace with is here.</p>}
      <PeoplePicker legend="People" people={shown} picked={picked} onChange={setPicked} />
      <ErrorText error={error} />
      <button type="button" class="primary" disabled={!picked.length} onClick={() => void add()}>
        Add
      </button>
    </Dialog>
  );
}
