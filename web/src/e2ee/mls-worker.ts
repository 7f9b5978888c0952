/// <reference lib="webworker" />
// The browser's MLS client (docs/e2ee.md) in a Web Worker, with ts-mls (the implementation the
// server's tests use): key packages, groups, Commits, Welcomes, application messages and the
// franking commitment. The page sends it one request at a time per call and it answers them in
// order; its state is kept sealed in IndexedDB (./vault.ts) after every change, so it survives
// reloads. It never talks to the server: the page carries its bytes.
import {
  acceptAll,
  createApplicationMessage,
  createCommit,
  createGroup,
  decodeGroupState,
  decodeMlsMessage,
  defaultCapabilities,
  defaultLifetime,
  emptyPskIndex,
  encodeGroupState,
  encodeMlsMessage,
  generateKeyPackage,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  joinGroup,
  processMessage,
  type CiphersuiteImpl,
  type ClientState,
  type KeyPackage,
  type PrivateKeyPackage,
  type PrivateMessage,
  type Proposal,
} from 'ts-mls';
import { defaultClientConfig } from 'ts-mls/clientConfig.js';
import { decryptSenderData } from 'ts-mls/privateMessage.js';

import { b64, pack, unb64, unpack } from './bytes.ts';
import { vault } from './vault.ts';
import type { MlsRequest } from './protocol.ts';

const SUITE = 'MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519' as const;
let impl: CiphersuiteImpl | null = null;
const suite = async () => (impl ??= await getCiphersuiteImpl(getCiphersuiteFromName(SUITE)));

const utf8 = (s: string) => new TextEncoder().encode(s);

/** The sender's franking commitment: HMAC-SHA256(r, "svc-franking-commitment-v1" 0 conv 0 body). */
async function commitment(
  opening: Uint8Array,
  conversationId: string,
  body: Uint8Array,
): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    'raw',
    opening as Uint8Array<ArrayBuffer>,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const head = utf8(`svc-franking-commitment-v1\0${conversationId}\0`);
  const data = new Uint8Array(head.length + body.length);
  data.set(head);
  data.set(body, head.length);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, data));
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}

interface Group {
  state: ClientState;
  incarnation: number;
  /** The epoch this device joined at (0 for the group's creator). */
  joinedEpoch: number;
  /** Members whose devices this device knows were added (so a new member is noticed). */
  members: string[];
}

let deviceId = '';
let identity = '';
const groups = new Map<string, Group>();
const pending = new Map<string, { state: ClientState; members?: string[] }>();

const gkey = (conversationId: string) => `${deviceId}:${conversationId}`;

async function saveGroup(conversationId: string, g: Group): Promise<void> {
  groups.set(conversationId, g);
  await vault.put('groups', gkey(conversationId), encodeGroupState(g.state), {
    incarnation: g.incarnation,
    joinedEpoch: g.joinedEpoch,
    members: g.members,
  });
}

async function loadGroup(conversationId: string): Promise<Group | null> {
  const had = groups.get(conversationId);
  if (had) return had;
  const bytes = await vault.get('groups', gkey(conversationId));
  if (!bytes) return null;
  const meta = (await vault.meta<{ incarnation: number; joinedEpoch: number; members: string[] }>(
    'groups',
    gkey(conversationId),
  ))!;
  const decoded = decodeGroupState(bytes, 0);
  if (!decoded) return null;
  const g: Group = {
    state: { ...decoded[0], clientConfig: defaultClientConfig },
    incarnation: meta.incarnation,
    joinedEpoch: meta.joinedEpoch,
    members: meta.members,
  };
  groups.set(conversationId, g);
  return g;
}

const epochOf = (g: Group) => Number(g.state.groupContext.epoch);

async function newPackage(lastResort: boolean): Promise<string> {
  const kp = await generateKeyPackage(
    { credentialType: 'basic', identity: utf8(identity) },
    defaultCapabilities(),
    defaultLifetime,
    [],
    await suite(),
  );
  const pub = encodeMlsMessage({
    keyPackage: kp.publicPackage,
    wireformat: 'mls_key_package',
    version: 'mls10',
  });
  const priv = kp.privatePackage;
  const id = b64(crypto.getRandomValues(new Uint8Array(12)));
  await vault.put(
    'packages',
    `${deviceId}:${id}`,
    pack([priv.initPrivateKey, priv.hpkePrivateKey, priv.signaturePrivateKey]),
    { pub, lastResort },
  );
  return b64(pub);
}

async function ownPackages(): Promise<
  Array<{ key: string; pub: KeyPackage; priv: PrivateKeyPackage; lastResort: boolean }>
> {
  const rows = await vault.all('packages', deviceId);
  return rows.map((r) => {
    const [initPrivateKey, hpkePrivateKey, signaturePrivateKey] = unpack(r.bytes);
    const msg = decodeMlsMessage(r.meta.pub as Uint8Array, 0)![0];
    if (msg.wireformat !== 'mls_key_package') throw new Error('a stored key package is damaged');
    return {
      key: r.key,
      pub: msg.keyPackage,
      priv: {
        initPrivateKey: initPrivateKey!,
        hpkePrivateKey: hpkePrivateKey!,
        signaturePrivateKey: signaturePrivateKey!,
      },
      lastResort: r.meta.lastResort === true,
    };
  });
}

function leafOf(g: Group, device: string): number {
  const tree = g.state.ratchetTree;
  for (let i = 0; i < tree.length; i += 2) {
    const node = tree[i];
    if (node?.nodeType !== 'leaf') continue;
    const cred = node.leaf.credential;
    if (cred.credentialType !== 'basic') continue;
    if (new TextDecoder().decode(cred.identity).endsWith(`:${device}`)) return i / 2;
  }
  throw new Error(`device ${device} is not in the group`);
}

/**
 * The device whose leaf sent a PrivateMessage, read from its sender data (RFC 9420, 6.3.2) with
 * the epoch's tree; null when it cannot be read. MLS then checks that leaf's signature.
 */
async function senderDevice(g: Group, pm: PrivateMessage): Promise<string | null> {
  const current = pm.epoch === g.state.groupContext.epoch;
  const data = current ? null : g.state.historicalReceiverData.get(pm.epoch);
  const secret = current ? g.state.keySchedule.senderDataSecret : data?.senderDataSecret;
  const tree = current ? g.state.ratchetTree : data?.ratchetTree;
  if (!secret || !tree) return null;
  const sender = await decryptSenderData(pm, secret, await suite());
  const node = sender ? tree[sender.leafIndex * 2] : undefined;
  if (node?.nodeType !== 'leaf' || node.leaf.credential.credentialType !== 'basic') return null;
  const id = new TextDecoder().decode(node.leaf.credential.identity);
  return id.slice(id.lastIndexOf(':') + 1);
}

function devicesOf(g: Group): string[] {
  const out: string[] = [];
  for (const node of g.state.ratchetTree) {
    if (node?.nodeType !== 'leaf' || node.leaf.credential.credentialType !== 'basic') continue;
    const id = new TextDecoder().decode(node.leaf.credential.identity);
    out.push(id.slice(id.lastIndexOf(':') + 1));
  }
  return out;
}

async function handle(req: MlsRequest): Promise<unknown> {
  switch (req.op) {
    case 'init':
      if (deviceId !== req.deviceId) {
        groups.clear();
        pending.clear();
      }
      deviceId = req.deviceId;
      identity = req.identity;
      await suite();
      return (await ownPackages()).filter((p) => !p.lastResort).length;
    case 'makePackages': {
      const packages: string[] = [];
      for (let i = 0; i < req.n; i++) packages.push(await newPackage(false));
      let lastResort: string | null = null;
      if (req.lastResort) {
        for (const p of await ownPackages())
          if (p.lastResort) await vault.delete('packages', p.key);
        lastResort = await newPackage(true);
      }
      return { packages, lastResort };
    }
    case 'group': {
      const g = await loadGroup(req.conversationId);
      return g
        ? {
            incarnation: g.incarnation,
            epoch: epochOf(g),
            joinedEpoch: g.joinedEpoch,
            members: g.members,
            deviceIds: devicesOf(g),
          }
        : null;
    }
    case 'forget':
      groups.delete(req.conversationId);
      pending.delete(req.conversationId);
      return null;
    case 'createGroup': {
      const cs = await suite();
      const kp = await generateKeyPackage(
        { credentialType: 'basic', identity: utf8(identity) },
        defaultCapabilities(),
        defaultLifetime,
        [],
        cs,
      );
      const state = await createGroup(
        utf8(`svc:${req.conversationId}:${req.incarnation}`),
        kp.publicPackage,
        kp.privatePackage,
        [],
        cs,
      );
      await saveGroup(req.conversationId, {
        state,
        incarnation: req.incarnation,
        joinedEpoch: 0,
        members: [],
      });
      return null;
    }
    case 'prepareCommit': {
      const g = await loadGroup(req.conversationId);
      if (!g) throw new Error('no group here');
      const proposals: Proposal[] = [];
      for (const kp of req.add) {
        const decoded = decodeMlsMessage(unb64(kp), 0)![0];
        if (decoded.wireformat !== 'mls_key_package') throw new Error('not a key package');
        proposals.push({ proposalType: 'add', add: { keyPackage: decoded.keyPackage } });
      }
      for (const d of req.removeDeviceIds) {
        proposals.push({ proposalType: 'remove', remove: { removed: leafOf(g, d) } });
      }
      const result = await createCommit(
        { state: g.state, cipherSuite: await suite() },
        { extraProposals: proposals, ratchetTreeExtension: true },
      );
      pending.set(req.conversationId, { state: result.newState, members: req.members });
      return {
        incarnation: g.incarnation,
        epoch: epochOf(g),
        commit: b64(encodeMlsMessage(result.commit)),
        welcome: result.welcome
          ? b64(
              encodeMlsMessage({
                welcome: result.welcome,
                wireformat: 'mls_welcome',
                version: 'mls10',
              }),
            )
          : null,
      };
    }
    case 'confirmCommit': {
      const g = await loadGroup(req.conversationId);
      const p = pending.get(req.conversationId);
      pending.delete(req.conversationId);
      if (!g || !p) return null;
      await saveGroup(req.conversationId, {
        ...g,
        state: p.state,
        members: p.members ?? g.members,
      });
      return null;
    }
    case 'dropGroup':
      groups.delete(req.conversationId);
      pending.delete(req.conversationId);
      await vault.delete('groups', gkey(req.conversationId));
      return null;
    case 'discardCommit':
      pending.delete(req.conversationId);
      return null;
    case 'setMembers': {
      const g = await loadGroup(req.conversationId);
      if (g) await saveGroup(req.conversationId, { ...g, members: req.members });
      return null;
    }
    case 'join': {
      const cs = await suite();
      const own = await ownPackages();
      for (const w of [...req.welcomes].reverse()) {
        const decoded = decodeMlsMessage(unb64(w.welcome), 0)![0];
        if (decoded.wireformat !== 'mls_welcome') continue;
        for (const kp of own) {
          let state: ClientState;
          try {
            state = await joinGroup(decoded.welcome, kp.pub, kp.priv, emptyPskIndex, cs);
          } catch {
            continue; // not the package this Welcome was made for
          }
          if (!kp.lastResort) await vault.delete('packages', kp.key);
          await saveGroup(req.conversationId, {
            state,
            incarnation: w.incarnation,
            joinedEpoch: Number(state.groupContext.epoch),
            members: req.members,
          });
          return true;
        }
      }
      return false;
    }
    case 'applyCommit': {
      const g = await loadGroup(req.conversationId);
      if (!g || req.incarnation !== g.incarnation) return 'none';
      const epoch = epochOf(g);
      if (req.epoch < epoch) return 'old';
      if (req.epoch > epoch) return 'gap';
      const msg = decodeMlsMessage(unb64(req.commit), 0)![0];
      if (msg.wireformat !== 'mls_private_message' && msg.wireformat !== 'mls_public_message') {
        throw new Error('not a handshake message');
      }
      const result = await processMessage(msg, g.state, emptyPskIndex, acceptAll, await suite());
      await saveGroup(req.conversationId, { ...g, state: result.newState });
      return 'applied';
    }
    case 'encrypt': {
      const g = await loadGroup(req.conversationId);
      if (!g) throw new Error('no group here');
      const body = utf8(req.body);
      const opening = crypto.getRandomValues(new Uint8Array(32));
      const plaintext = new Uint8Array(32 + body.length);
      plaintext.set(opening);
      plaintext.set(body, 32);
      const created = await createApplicationMessage(g.state, plaintext, await suite());
      await saveGroup(req.conversationId, { ...g, state: created.newState });
      return {
        incarnation: g.incarnation,
        epoch: epochOf(g),
        ciphertext: b64(
          encodeMlsMessage({
            privateMessage: created.privateMessage,
            wireformat: 'mls_private_message',
            version: 'mls10',
          }),
        ),
        frankingCommitment: b64(await commitment(opening, req.conversationId, body)),
        opening: b64(opening),
      };
    }
    case 'remember':
      await vault.put(
        'plain',
        `${deviceId}:${req.messageId}`,
        pack([unb64(req.opening), utf8(req.body)]),
      );
      return null;
    case 'read': {
      const out: Record<string, { body: string; opening: string }> = {};
      for (const id of req.messageIds) {
        const bytes = await vault.get('plain', `${deviceId}:${id}`);
        if (!bytes) continue;
        const [opening, body] = unpack(bytes);
        out[id] = { opening: b64(opening!), body: new TextDecoder().decode(body) };
      }
      return out;
    }
    case 'decrypt': {
      const cached = await vault.get('plain', `${deviceId}:${req.messageId}`);
      if (cached) {
        const [opening, body, sender] = unpack(cached);
        // The MLS sender kept with the text is checked against the author's device again.
        if (sender && new TextDecoder().decode(sender) !== req.senderDeviceId) {
          return { unreadable: 'sender' };
        }
        return { body: new TextDecoder().decode(body), opening: b64(opening!) };
      }
      const g = await loadGroup(req.conversationId);
      if (!g || req.incarnation < g.incarnation) return { unreadable: 'before' };
      if (req.incarnation > g.incarnation) return { unreadable: 'later' };
      if (req.epoch < g.joinedEpoch) return { unreadable: 'before' };
      if (req.epoch > epochOf(g)) return { unreadable: 'later' };
      const msg = decodeMlsMessage(unb64(req.ciphertext), 0)![0];
      if (msg.wireformat !== 'mls_private_message') return { unreadable: 'failed' };
      let result;
      let sender: string | null;
      try {
        sender = await senderDevice(g, msg.privateMessage);
        result = await processMessage(msg, g.state, emptyPskIndex, acceptAll, await suite());
      } catch {
        return { unreadable: 'failed' };
      }
      if (result.kind !== 'applicationMessage') return { unreadable: 'failed' };
      await saveGroup(req.conversationId, { ...g, state: result.newState });
      const plaintext = new Uint8Array(result.message);
      const opening = plaintext.slice(0, 32);
      const body = plaintext.slice(32);
      const expected = await commitment(opening, req.conversationId, body);
      if (!equal(expected, unb64(req.frankingCommitment))) return { unreadable: 'franking' };
      // MLS authenticated the sending leaf; the server attributed the message to the account of
      // the device that sent it. A leaf of another device (its ciphertext sent again by someone
      // else) is not shown as the author's.
      if (sender === null) return { unreadable: 'failed' };
      await vault.put('plain', `${deviceId}:${req.messageId}`, pack([opening, body, utf8(sender)]));
      if (sender !== req.senderDeviceId) return { unreadable: 'sender' };
      return { body: new TextDecoder().decode(body), opening: b64(opening) };
    }
  }
}

// One request at a time, in the order they came: MLS state moves on with each.
let queue: Promise<unknown> = Promise.resolve();
self.onmessage = (ev: MessageEvent<{ id: number; req: MlsRequest }>) => {
  const { id, req } = ev.data;
  queue = queue.then(() =>
    handle(req).then(
      (result) => self.postMessage({ id, result }),
      (err: unknown) =>
        self.postMessage({ id, error: err instanceof Error ? err.message : String(err) }),
    ),
  );
};
