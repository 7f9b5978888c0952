// Encrypted conversations on the page's side (docs/e2ee.md, "What a client must do"): this
// browser's device set up (enrolment for a password account, key packages), the MLS group of each
// encrypted conversation kept in step with the server (created, joined from a Welcome, Commits
// applied in epoch order, new members added, departed devices removed), and messages encrypted
// before they leave and decrypted as they come. The MLS work runs in ./mls-worker.ts; this file
// carries its bytes to and from the API. Loaded on demand, the first time an encrypted
// conversation is opened or started.
import { ApiError, gql } from '../api/graphql.ts';
import { KEY_CHALLENGE } from '../api/queries.ts';
import type { Message, MessagePage } from '../api/types.ts';
import { newKeyPair, publicKeyOf, sign, statement, storeAccount } from '../auth/keys.ts';
import { defaultDeviceName } from '../auth/flows.ts';
import { conversations, me } from '../state/store.ts';
import { confirmAction } from '../ui/confirm.tsx';

import { deviceSetUp, groupsHere, type GroupHere } from './glue.ts';
import { call, exclusive, locked, packagesLock } from './worker-link.ts';
import type { Decrypted, Encrypted, GroupInfo, MlsRequest, PreparedCommit } from './protocol.ts';
import type { SealedFileRef } from './sealed-refs.ts';
import { takeEdit } from './edits.ts';
import { finishPage, fromKept, needsText, readKept } from './kept.ts';
import { withPlain } from './plain.ts';
import {
  DEVICE_Q,
  PUBLISH,
  GROUP_STATE,
  COMMITS,
  WELCOMES,
  CLAIM,
  COMMIT,
  SEND_ENCRYPTED,
  ENROLL,
} from './documents.ts';

export { editsOf, takeEdit, withEdit } from './edits.ts';
export { unreadableWords } from './plain.ts';

interface GroupState {
  incarnation: number;
  epoch: number;
  deviceIds: string[];
  pendingRemovalDeviceIds: string[];
  pendingAdditions: Array<{ deviceId: string; userId: string }>;
  orphaned: boolean;
}

const codeOf = (err: unknown) => (err instanceof ApiError ? err.code : '');

// This browser's device.

interface Device {
  deviceId: string;
  identity: string;
}

/** Single-use key packages published at a time; more follow `MlsKeyPackagesLow`. */
const PACKAGES = 20;
let device: Promise<Device | null> | null = null;
let deviceOf = '';

/** Thrown when the person chose not to set encryption up on this browser. */
export class NotSetUp extends Error {
  constructor() {
    super('Encryption is not set up on this browser.');
    this.name = 'NotSetUp';
  }
}

/**
 * This browser's device, set up for encryption: a password account is first offered enrolment
 * (never silently; `ask` false answers null instead), then key packages are published when the
 * server holds none this browser can open.
 */
export function ensureDevice(ask = true): Promise<Device | null> {
  const who = me.value?.id ?? '';
  if (device && deviceOf === who) return device;
  deviceOf = who;
  const p = setUp(ask).catch((err: unknown) => {
    if (device === p) device = null;
    throw err;
  });
  device = p;
  return p.then((d) => {
    if (!d && device === p) device = null;
    return d;
  });
}

async function setUp(ask: boolean): Promise<Device | null> {
  type D = {
    myDevices: Array<{
      id: string;
      current: boolean;
      encryptionReady: boolean;
      keyPackagesLow: boolean;
    }>;
    myKeyIdentity: { id: string } | null;
  };
  const first = await gql<D>(DEVICE_Q);
  if (!first.myKeyIdentity) {
    if (!ask) return null;
    await enrol();
  }
  // Another tab may be setting this device up too: one at a time, each reading afresh.
  return exclusive(packagesLock(me.value?.id ?? ''), async () => {
    const d = await gql<D>(DEVICE_Q);
    const current = d.myDevices.find((x) => x.current);
    if (!current || !d.myKeyIdentity) {
      throw new Error(
        'This session was not started with a device key. Sign out, then sign in with this browser’s key.',
      );
    }
    const identity = `${d.myKeyIdentity.id}:${current.id}`;
    const held = await call<number>({ op: 'init', deviceId: current.id, identity });
    if (!current.encryptionReady || held === 0 || current.keyPackagesLow) {
      await publish(current.id, !current.encryptionReady || held === 0);
      deviceSetUp();
    }
    return { deviceId: current.id, identity };
  });
}

async function publish(deviceId: string, lastResort: boolean): Promise<void> {
  const made = await call<{ packages: string[]; lastResort: string | null }>({
    op: 'makePackages',
    n: PACKAGES,
    lastResort,
  });
  await gql(PUBLISH, { d: deviceId, ks: made.packages, l: made.lastResort });
}

/**
 * Enrols a password account (docs/keys.md, "Enrolling a password account"), after the person
 * agreed in words to what follows: an identity key and this browser's device key, both kept in
 * this browser; the password stops working and every other session ends.
 */
async function enrol(): Promise<void> {
  const who = me.value;
  if (!who) throw new NotSetUp();
  const yes = await confirmAction({
    title: 'Set up encryption on this browser?',
    body: [
      'Encrypted conversations need keys that only your devices hold. This browser will make ',
      'them and keep them. After that your account signs in with this browser’s key instead ',
      'of a password: your password stops working, and every other place where your account ',
      'is signed in is signed out now. To use another browser later, add it from Settings → ',
      'Devices and keys on this one, and keep the backup of your identity key that Settings ',
      'offers.',
    ].join(''),
    confirm: 'Set up and sign out elsewhere',
    danger: true,
  });
  if (!yes) throw new NotSetUp();
  const identity = await newKeyPair(true);
  const deviceKey = await newKeyPair(false);
  const identityPublicKey = await publicKeyOf(identity);
  const devicePublicKey = await publicKeyOf(deviceKey);
  const c = (
    await gql<{ keyLoginChallenge: { challengeId: string; nonce: string; serverKey: string } }>(
      KEY_CHALLENGE,
    )
  ).keyLoginChallenge;
  const issuedAt = new Date().toISOString();
  const text = statement('enroll-identity', c, issuedAt, [
    ['account', who.id],
    ['identity', identityPublicKey],
    ['device', devicePublicKey],
  ]);
  await gql(ENROLL, {
    i: {
      identityPublicKey,
      devicePublicKey,
      deviceName: defaultDeviceName(),
      challengeId: c.challengeId,
      issuedAt,
      identitySignature: await sign(identity.privateKey, text),
      deviceSignature: await sign(deviceKey.privateKey, text),
    },
  });
  await storeAccount({
    username: who.username,
    devicePublicKey,
    device: deviceKey,
    identity,
    createdAt: issuedAt,
  });
}

const group = (conversationId: string) => call<GroupInfo | null>({ op: 'group', conversationId });

async function groupState(conversationId: string): Promise<GroupState> {
  return (await gql<{ mlsGroupState: GroupState }>(GROUP_STATE, { c: conversationId }))
    .mlsGroupState;
}

/** Applies the Commits after this device's epoch, page by page. */
async function catchUp(conversationId: string): Promise<void> {
  for (;;) {
    const g = await group(conversationId);
    if (!g) return;
    const page = (
      await gql<{
        mlsCommits: {
          items: Array<{ incarnation: number; epoch: number; commit: string }>;
          hasMore: boolean;
        };
      }>(COMMITS, { c: conversationId, i: g.incarnation, e: g.epoch })
    ).mlsCommits;
    for (const item of page.items) {
      await call({ op: 'applyCommit', conversationId, ...item });
    }
    if (!page.hasMore || !page.items.length) return;
  }
}

interface Plan {
  add: Array<{ deviceId: string; keyPackage: string }>;
  remove: string[];
  members?: string[];
}

/**
 * Makes and submits a Commit: `plan` says what it adds and removes, asked again after each
 * `STALE_EPOCH` (the Commits missed are applied first), since another device may have done it.
 */
async function commitWith(
  conversationId: string,
  plan: () => Promise<Plan>,
  opts: { first?: boolean } = {},
): Promise<void> {
  for (let attempt = 0; attempt < 6; attempt++) {
    if (attempt > 0) await catchUp(conversationId);
    const p = await plan();
    // The first Commit creates the group, even when it adds nobody yet.
    if (!p.add.length && !p.remove.length && !opts.first) {
      if (p.members) await call({ op: 'setMembers', conversationId, members: p.members });
      return;
    }
    const prepared = await call<PreparedCommit>({
      op: 'prepareCommit',
      conversationId,
      add: p.add.map((a) => a.keyPackage),
      removeDeviceIds: p.remove,
      ...(p.members ? { members: p.members } : {}),
    });
    try {
      await gql(COMMIT, {
        i: {
          conversationId,
          incarnation: prepared.incarnation,
          epoch: prepared.epoch,
          commit: prepared.commit,
          welcome: prepared.welcome,
          addedDeviceIds: p.add.map((a) => a.deviceId),
          removedDeviceIds: p.remove,
        },
      });
    } catch (err) {
      await call({ op: 'discardCommit', conversationId });
      if (codeOf(err) === 'STALE_EPOCH' && !opts.first) continue;
      throw err;
    }
    await call({ op: 'confirmCommit', conversationId });
    return;
  }
  throw new Error('The conversation kept changing while this browser updated it. Try again.');
}

/**
 * Claims a package for each device to add: those of members this device has not seen added yet,
 * and those the server lists in `pendingAdditions` (a member's newly linked device, say).
 */
function addNewMembers(conversationId: string): () => Promise<Plan> {
  return async () => {
    const g = await group(conversationId);
    const c = conversations.value[conversationId];
    if (!g || !c) return { add: [], remove: [] };
    const members = c.memberIds;
    const waiting = (await groupState(conversationId)).pendingAdditions
      .filter((p) => !g.deviceIds.includes(p.deviceId) && members.includes(p.userId))
      .map((p) => p.userId);
    const fresh = [...new Set([...members.filter((u) => !g.members.includes(u)), ...waiting])];
    const add: Plan['add'] = [];
    for (const userId of fresh) {
      const claimed = (
        await gql<{ claimKeyPackages: Array<{ deviceId: string; keyPackage: string }> }>(CLAIM, {
          c: conversationId,
          u: userId,
        })
      ).claimKeyPackages;
      for (const k of claimed) if (!g.deviceIds.includes(k.deviceId)) add.push(k);
    }
    return { add, remove: [], members };
  };
}

/**
 * Brings this device's view of the conversation's group in step with the server: creates the
 * group when there is none (or it was orphaned), joins from a Welcome, applies missed Commits,
 * removes departed devices and adds new members' devices. Null while this device is not in the
 * group (a member's device has yet to add it).
 */
async function syncNow(
  conversationId: string,
  dev: Device,
  again = true,
): Promise<GroupInfo | null> {
  let gs = await groupState(conversationId);
  let g = await group(conversationId);
  if (gs.incarnation === 0 || (gs.orphaned && (!g || g.incarnation <= gs.incarnation))) {
    // No group yet (or none any device can commit to): this device starts it, adding the
    // devices of every member that has one. Another device may have been quicker: then the
    // Commit is refused as stale, and this device joins from its Welcome instead.
    await call({ op: 'createGroup', conversationId, incarnation: gs.incarnation + 1 });
    try {
      await commitWith(conversationId, addNewMembers(conversationId), { first: true });
    } catch (err) {
      await call({ op: 'dropGroup', conversationId });
      if (!again || codeOf(err) !== 'STALE_EPOCH') throw err;
      return syncNow(conversationId, dev, false);
    }
    return group(conversationId);
  }
  if (!g || g.incarnation < gs.incarnation) {
    if (gs.deviceIds.includes(dev.deviceId)) {
      const welcomes = (
        await gql<{ mlsWelcomes: Array<{ incarnation: number; welcome: string }> }>(WELCOMES, {
          c: conversationId,
        })
      ).mlsWelcomes.filter((w) => w.incarnation === gs.incarnation);
      await call({
        op: 'join',
        conversationId,
        welcomes,
        members: conversations.value[conversationId]?.memberIds ?? [],
      });
    }
    g = await group(conversationId);
    if (!g || g.incarnation < gs.incarnation) {
      setHere(conversationId, { joined: false, unlisted: [], missing: [] });
      return null;
    }
  }
  await catchUp(conversationId);
  if (gs.pendingRemovalDeviceIds.length) {
    await commitWith(conversationId, async () => {
      gs = await groupState(conversationId);
      return { add: [], remove: gs.pendingRemovalDeviceIds };
    });
  }
  await commitWith(conversationId, addNewMembers(conversationId));
  g = await group(conversationId);
  if (g) await compareTree(conversationId, g);
  return g;
}

function setHere(conversationId: string, here: GroupHere): void {
  groupsHere.value = { ...groupsHere.value, [conversationId]: here };
}

/**
 * Compares the group's tree with the server's list of its devices (docs/e2ee.md: a committer
 * declares what it added and removed, and a dishonest one can mislead the server's list), when
 * both are at one epoch.
 */
async function compareTree(conversationId: string, g: GroupInfo): Promise<void> {
  const gs = await groupState(conversationId);
  if (gs.incarnation !== g.incarnation || gs.epoch !== g.epoch) return;
  setHere(conversationId, {
    joined: true,
    unlisted: g.deviceIds.filter((d) => !gs.deviceIds.includes(d)),
    missing: gs.deviceIds.filter((d) => !g.deviceIds.includes(d)),
  });
}

/** Keeps the group in step (see syncNow); the person is asked to set up when they must be. */
export async function sync(conversationId: string, ask = true): Promise<GroupInfo | null> {
  const dev = await ensureDevice(ask);
  if (!dev) return null;
  return locked(dev.deviceId, conversationId, () => syncNow(conversationId, dev));
}

// Messages.

async function decryptOne(conversationId: string, m: Message, dev: Device): Promise<Message> {
  if (!m.ciphertext || !m.mls || m.isDeleted) return m;
  const req: MlsRequest = {
    op: 'decrypt',
    conversationId,
    messageId: m.id,
    ciphertext: m.ciphertext,
    frankingCommitment: m.mls.frankingCommitment,
    incarnation: m.mls.incarnation,
    epoch: m.mls.epoch,
    senderDeviceId: m.mls.senderDeviceId ?? null,
  };
  if (m.mls.senderDeviceId === dev.deviceId) {
    // MLS never decrypts a device's own message: its text was kept when it was sent.
    const known = await call<Record<string, { body: string; opening: string }>>({
      op: 'read',
      messageIds: [m.id],
    });
    const k = known[m.id];
    return withPlain(m, k ?? { unreadable: 'failed' });
  }
  let d = await call<Decrypted>(req);
  if ('unreadable' in d && d.unreadable === 'later') {
    await catchUp(conversationId);
    d = await call<Decrypted>(req);
  }
  return withPlain(m, d);
}

/** A page of an encrypted conversation with each message decrypted (or said unreadable). */
export async function decryptPage(conversationId: string, page: MessagePage): Promise<MessagePage> {
  const dev = await ensureDevice(true);
  if (!dev) return page;
  return locked(dev.deviceId, conversationId, async () => {
    const ids = page.items.filter((m) => needsText(m) || m.isDeleted).map((m) => m.id);
    const kept = await readKept(dev.deviceId, ids);
    await syncNow(conversationId, dev);
    // Oldest first: a sender's messages are read in the order its keys move on.
    const order = [...page.items].sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
    const read = new Map<string, Message>();
    for (const m of order) {
      if (!needsText(m)) continue;
      const k = kept.get(m.id);
      read.set(m.id, k ? withPlain(m, fromKept(m, k)) : await decryptOne(conversationId, m, dev));
    }
    return finishPage(page, read, kept);
  });
}

/**
 * A message that arrived live, decrypted; null for this device's own message (the page that
 * sent it shows it from the send's answer).
 */
export async function decryptLive(m: Message): Promise<Message | null> {
  const dev = await ensureDevice(false);
  if (!dev || !m.mls) return m;
  const conversationId = m.conversationId;
  return locked(dev.deviceId, conversationId, async () => {
    if (m.mls!.senderDeviceId === dev.deviceId) {
      const known = await call<Record<string, { body: string; opening: string }>>({
        op: 'read',
        messageIds: [m.id],
      });
      return known[m.id] ? withPlain(m, known[m.id]!) : null;
    }
    return decryptOne(conversationId, m, dev);
  });
}

/** Encrypts and sends a message (with the keys of its files); kept on this browser only. */
export function send(
  conversationId: string,
  text: string,
  threadRootId: string | null,
  files: SealedFileRef[] = [],
): Promise<Message> {
  // The files' keys and names travel inside the message (./sealed-file.ts).
  return sendBody(conversationId, text, files.length ? { text, files } : { text }, threadRootId);
}

/**
 * Edits an encrypted message of this account: a new encrypted message (this epoch, its own
 * franking commitment) naming the one it replaces, sent outside any thread; `withEdit` then
 * shows the message with its new text.
 */
export async function edit(conversationId: string, target: Message, text: string): Promise<void> {
  takeEdit(await sendBody(conversationId, text, { text, edit: target.id }, null));
}

async function sendBody(
  conversationId: string,
  text: string,
  content: Record<string, unknown>,
  threadRootId: string | null,
): Promise<Message> {
  const dev = await ensureDevice(true);
  if (!dev) throw new NotSetUp();
  return locked(dev.deviceId, conversationId, async () => {
    const body = JSON.stringify(content);
    const replaces = typeof content.edit === 'string' ? content.edit : null;
    let g = await syncNow(conversationId, dev);
    for (let attempt = 0; attempt < 5; attempt++) {
      if (!g) throw new Error('This browser has not been added to the conversation yet.');
      const enc = await call<Encrypted>({ op: 'encrypt', conversationId, body });
      let sent: Message;
      try {
        sent = (
          await gql<{ sendEncryptedMessage: Message }>(SEND_ENCRYPTED, {
            i: {
              conversationId,
              incarnation: enc.incarnation,
              epoch: enc.epoch,
              ciphertext: enc.ciphertext,
              frankingCommitment: enc.frankingCommitment,
              threadRootId,
            },
          })
        ).sendEncryptedMessage;
      } catch (err) {
        const code = codeOf(err);
        if (code === 'STALE_EPOCH') {
          await catchUp(conversationId);
          g = await group(conversationId);
          continue;
        }
        if (code === 'MLS_COMMIT_REQUIRED') {
          g = await syncNow(conversationId, dev);
          continue;
        }
        throw err;
      }
      await call({ op: 'remember', messageId: sent.id, body, opening: enc.opening });
      return {
        ...sent,
        text,
        opening: enc.opening,
        body,
        unreadable: null,
        ...(replaces ? { replaces } : {}),
      };
    }
    throw new Error('The conversation kept changing while sending. Try again.');
  });
}

// Live events of encrypted conversations (docs/events.md).

export async function mlsEvent(
  type: string,
  conversationId: string | null,
  p: Record<string, unknown>,
): Promise<'joined' | null> {
  const dev = await ensureDevice(false);
  if (!dev) return null;
  if (type === 'MlsKeyPackagesLow') {
    if (p.deviceId !== dev.deviceId) return null;
    // Every tab hears it: the first publishes, the others find the device no longer low.
    await exclusive(packagesLock(me.value?.id ?? ''), async () => {
      const d = await gql<{ myDevices: Array<{ current: boolean; keyPackagesLow: boolean }> }>(
        DEVICE_Q,
      );
      if (d.myDevices.find((x) => x.current)?.keyPackagesLow) await publish(dev.deviceId, false);
    });
    return null;
  }
  if (!conversationId) return null;
  if (type === 'MlsCommitAdded') {
    if (p.deviceId === dev.deviceId) return null;
    await locked(dev.deviceId, conversationId, async () => {
      const r = await call<string>({
        op: 'applyCommit',
        conversationId,
        incarnation: Number(p.incarnation),
        epoch: Number(p.epoch),
        commit: String(p.commit),
      });
      if (r === 'gap') await catchUp(conversationId);
    });
    return null;
  }
  if (type === 'MlsWelcomeAvailable') {
    const ids = Array.isArray(p.deviceIds) ? p.deviceIds : [];
    if (!ids.includes(dev.deviceId)) return null;
    const before = await group(conversationId);
    const after = await sync(conversationId, false);
    return after && (!before || before.incarnation !== after.incarnation) ? 'joined' : null;
  }
  if (type === 'MlsMembershipChanged') {
    await sync(conversationId, false);
  }
  return null;
}
