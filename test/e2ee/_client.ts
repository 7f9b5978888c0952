import { createHmac, randomBytes } from 'node:crypto';

import {
  acceptAll,
  createApplicationMessage,
  createCommit,
  createGroup,
  decodeMlsMessage,
  defaultCapabilities,
  defaultLifetime,
  emptyPskIndex,
  encodeMlsMessage,
  generateKeyPackage,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  joinGroup,
  processMessage,
  type CiphersuiteImpl,
  type ClientState,
  type KeyPackage,
  type Lifetime,
  type PrivateKeyPackage,
  type Proposal,
} from 'ts-mls';
import { expect } from 'vitest';

import type { Agent, GqlResponse, TestApp } from '../_util/app.js';
import {
  challenge,
  loginWithKey,
  newKey,
  nowIso,
  signText,
  signUpWithKey,
  statement,
  type KeyAccount,
} from '../devices/_keys.js';

// A client of docs/e2ee.md built on a real MLS implementation (ts-mls), written from the
// document: one object per device, holding its key packages and its state of each group.

export const SUITE = 'MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519' as const;
let impl: CiphersuiteImpl | null = null;
export const suite = async () => (impl ??= await getCiphersuiteImpl(getCiphersuiteFromName(SUITE)));

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64url'));

export const ok = (res: GqlResponse) => {
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data!;
};

/** The sender's franking commitment (docs/e2ee.md, "Franking"). */
export function commitment(opening: Buffer, conversationId: string, body: Buffer): Buffer {
  return createHmac('sha256', opening)
    .update(`svc-franking-commitment-v1\0${conversationId}\0`)
    .update(body)
    .digest();
}

export interface Received {
  text: string;
  body: string;
  opening: string;
}

const MESSAGE_FIELDS = `id author { id } ciphertext text createdAt
  mls { incarnation epoch senderDeviceId frankingCommitment frankingTag }`;

/** One device of a key account, acting as an MLS client. */
export class MlsDevice {
  private readonly packages: Array<{ pub: KeyPackage; priv: PrivateKeyPackage }> = [];
  readonly groups = new Map<string, { state: ClientState; incarnation: number }>();

  constructor(
    readonly t: TestApp,
    readonly agent: Agent,
    readonly deviceId: string,
    /** `<keyIdentityId>:<deviceId>`, the credential identity the server wants. */
    readonly identity: string,
    readonly account?: KeyAccount,
  ) {}

  get userId() {
    return this.agent.id;
  }

  /** Signs a key account up and returns its first device. */
  static async signUp(t: TestApp, username?: string): Promise<MlsDevice> {
    const acc = await signUpWithKey(t, username ? { username } : {});
    return MlsDevice.of(t, acc.agent, acc);
  }

  /** Links a new device to this device's account (approved from here) and signs it in. */
  async linkDevice(): Promise<MlsDevice> {
    const key = newKey();
    const username = this.account!.username;
    const ch = await challenge(this.t);
    const issuedAt = nowIso(this.t);
    const text = statement('device-link', ch, issuedAt, [
      ['username', username],
      ['device', key.publicKey],
    ]);
    const offer = ok(
      await this.t.gql(
        `mutation($i: SendDeviceLinkOfferInput!) { sendDeviceLinkOffer(input: $i) { offerId code } }`,
        {
          i: {
            username,
            devicePublicKey: key.publicKey,
            deviceName: 'Phone',
            challengeId: ch.challengeId,
            issuedAt,
            signature: signText(key, text),
          },
        },
      ),
    ).sendDeviceLinkOffer;
    ok(
      await this.t.gql(
        'mutation($i: ApproveDeviceLinkInput!) { approveDeviceLink(input: $i) { id } }',
        { i: { offerId: offer.offerId, code: offer.code } },
        this.agent,
      ),
    );
    return MlsDevice.of(this.t, await loginWithKey(this.t, key, username), this.account);
  }

  /** The device the agent's session is bound to. */
  static async of(t: TestApp, agent: Agent, account?: KeyAccount): Promise<MlsDevice> {
    const data = ok(await t.gql('{ myDevices { id current } myKeyIdentity { id } }', {}, agent));
    const device = (data.myDevices as Array<{ id: string; current: boolean }>).find(
      (d) => d.current,
    )!;
    return new MlsDevice(t, agent, device.id, `${data.myKeyIdentity.id}:${device.id}`, account);
  }

  /** A fresh key package (kept with its private keys), base64url of its MLSMessage. */
  async keyPackage(opts: { identity?: string; lifetime?: Lifetime } = {}): Promise<string> {
    const cs = await suite();
    const kp = await generateKeyPackage(
      {
        credentialType: 'basic',
        identity: new TextEncoder().encode(opts.identity ?? this.identity),
      },
      defaultCapabilities(),
      opts.lifetime ?? defaultLifetime,
      [],
      cs,
    );
    this.packages.push({ pub: kp.publicPackage, priv: kp.privatePackage });
    return b64(
      encodeMlsMessage({
        keyPackage: kp.publicPackage,
        wireformat: 'mls_key_package',
        version: 'mls10',
      }),
    );
  }

  /** Publishes `n` single-use packages and a last-resort one; the raw response. */
  async publishRaw(input: Record<string, unknown>) {
    return this.t.gql(
      `mutation($d: ID!, $k: String, $ks: [String!], $l: String) {
        publishKeyPackage(deviceId: $d, keyPackage: $k, keyPackages: $ks, lastResortKeyPackage: $l) {
          id encryptionReady keyPackagesAvailable keyPackagesLow } }`,
      { d: this.deviceId, ...input },
      this.agent,
    );
  }

  async publish(n: number, lastResort = true) {
    const ks: string[] = [];
    for (let i = 0; i < n; i++) ks.push(await this.keyPackage());
    return ok(await this.publishRaw({ ks, l: lastResort ? await this.keyPackage() : null }))
      .publishKeyPackage;
  }

  async groupState(conversationId: string) {
    return ok(
      await this.t.gql(
        `query($c: ID!) { mlsGroupState(conversationId: $c) { incarnation epoch groupId deviceIds
          pendingRemovalDeviceIds orphaned } }`,
        { c: conversationId },
        this.agent,
      ),
    ).mlsGroupState;
  }

  /**
   * Creates the conversation's group locally (epoch 0 of `incarnation`), with no Commit yet: the
   * first group is incarnation 1; an orphaned group is started again at the next one.
   */
  async createGroup(conversationId: string, incarnation = 1) {
    const cs = await suite();
    await this.keyPackage();
    const own = this.packages.pop()!;
    const state = await createGroup(
      Buffer.from(`svc:${conversationId}:${incarnation}`),
      own.pub,
      own.priv,
      [],
      cs,
    );
    this.groups.set(conversationId, { state, incarnation });
  }

  epochOf(conversationId: string): number {
    return Number(this.groups.get(conversationId)!.state.groupContext.epoch);
  }

  async claim(conversationId: string, userId: string) {
    return ok(
      await this.t.gql(
        `mutation($c: ID!, $u: ID!) { claimKeyPackages(conversationId: $c, userId: $u) {
          deviceId userId keyPackage lastResort } }`,
        { c: conversationId, u: userId },
        this.agent,
      ),
    ).claimKeyPackages as Array<{ deviceId: string; keyPackage: string; lastResort: boolean }>;
  }

  /**
   * Makes a Commit adding the devices of `userIds` (claiming their packages) and removing
   * `removeDeviceIds`; submits it. Applies it locally only when the server accepted it.
   */
  async commit(
    conversationId: string,
    opts: {
      addUsers?: string[];
      removeDeviceIds?: string[];
      /** Key packages (base64url MLSMessages) added besides the claimed ones. */
      addKeyPackages?: string[];
      /** Devices declared as added instead of the claimed ones. */
      declareAdded?: string[];
    } = {},
  ): Promise<GqlResponse> {
    const cs = await suite();
    const group = this.groups.get(conversationId)!;
    const proposals: Proposal[] = [];
    const added: string[] = [];
    for (const userId of opts.addUsers ?? []) {
      for (const c of await this.claim(conversationId, userId)) {
        const decoded = decodeMlsMessage(unb64(c.keyPackage), 0)![0];
        if (decoded.wireformat !== 'mls_key_package') throw new Error('not a key package');
        proposals.push({ proposalType: 'add', add: { keyPackage: decoded.keyPackage } });
        added.push(c.deviceId);
      }
    }
    for (const kp of opts.addKeyPackages ?? []) {
      const decoded = decodeMlsMessage(unb64(kp), 0)![0];
      if (decoded.wireformat !== 'mls_key_package') throw new Error('not a key package');
      proposals.push({ proposalType: 'add', add: { keyPackage: decoded.keyPackage } });
    }
    for (const deviceId of opts.removeDeviceIds ?? []) {
      proposals.push({
        proposalType: 'remove',
        remove: { removed: this.leafOf(conversationId, deviceId) },
      });
    }
    const result = await createCommit(
      { state: group.state, cipherSuite: cs },
      { extraProposals: proposals, ratchetTreeExtension: true },
    );
    const res = await this.t.gql(
      `mutation($i: MlsCommitInput!) { commitMlsGroup(input: $i) { incarnation epoch deviceIds
        pendingRemovalDeviceIds } }`,
      {
        i: {
          conversationId,
          incarnation: group.incarnation,
          epoch: Number(group.state.groupContext.epoch),
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
          addedDeviceIds: opts.declareAdded ?? added,
          removedDeviceIds: opts.removeDeviceIds ?? [],
        },
      },
      this.agent,
    );
    if (!res.body.errors) group.state = result.newState;
    return res;
  }

  /** The leaf index of a device in the group, found by its credential identity. */
  leafOf(conversationId: string, deviceId: string): number {
    const tree = this.groups.get(conversationId)!.state.ratchetTree;
    for (let i = 0; i < tree.length; i += 2) {
      const node = tree[i];
      if (node?.nodeType !== 'leaf') continue;
      const cred = node.leaf.credential;
      if (cred.credentialType !== 'basic') continue;
      if (new TextDecoder().decode(cred.identity).endsWith(`:${deviceId}`)) return i / 2;
    }
    throw new Error(`device ${deviceId} is not in the group`);
  }

  /** Joins the conversation's group from a Welcome waiting for this device. */
  async join(conversationId: string) {
    const cs = await suite();
    const welcomes = ok(
      await this.t.gql(
        `query($c: ID) { mlsWelcomes(conversationId: $c) { id incarnation epoch welcome } }`,
        { c: conversationId },
        this.agent,
      ),
    ).mlsWelcomes as Array<{ incarnation: number; epoch: number; welcome: string }>;
    const w = welcomes[welcomes.length - 1];
    if (!w) throw new Error('no welcome waits for this device');
    const decoded = decodeMlsMessage(unb64(w.welcome), 0)![0];
    if (decoded.wireformat !== 'mls_welcome') throw new Error('not a welcome');
    for (const kp of this.packages) {
      try {
        const state = await joinGroup(decoded.welcome, kp.pub, kp.priv, emptyPskIndex, cs);
        this.groups.set(conversationId, { state, incarnation: w.incarnation });
        return;
      } catch {
        // Not the package this Welcome was made for; try the next.
      }
    }
    throw new Error('no key package of this device opens the welcome');
  }

  /** Fetches and applies the Commits after this device's epoch (several pages if need be). */
  async catchUp(conversationId: string, limit = 50) {
    const group = this.groups.get(conversationId)!;
    for (;;) {
      const page = ok(
        await this.t.gql(
          `query($c: ID!, $i: Int!, $e: Int!, $l: Int) { mlsCommits(conversationId: $c,
            incarnation: $i, fromEpoch: $e, limit: $l) { items { epoch commit } hasMore nextEpoch } }`,
          { c: conversationId, i: group.incarnation, e: this.epochOf(conversationId), l: limit },
          this.agent,
        ),
      ).mlsCommits as { items: Array<{ epoch: number; commit: string }>; hasMore: boolean };
      for (const item of page.items) await this.applyCommit(conversationId, item.commit);
      if (!page.hasMore) return;
    }
  }

  async applyCommit(conversationId: string, commit: string) {
    const cs = await suite();
    const group = this.groups.get(conversationId)!;
    const msg = decodeMlsMessage(unb64(commit), 0)![0];
    if (msg.wireformat !== 'mls_private_message' && msg.wireformat !== 'mls_public_message') {
      throw new Error('not a handshake message');
    }
    const result = await processMessage(msg, group.state, emptyPskIndex, acceptAll, cs);
    group.state = result.newState;
  }

  /** Encrypts `text` with a franking commitment and sends it; the raw response. */
  async sendRaw(
    conversationId: string,
    text: string,
    opts: { commitmentOverride?: Buffer; threadRootId?: string; opening?: Buffer } = {},
  ): Promise<GqlResponse> {
    const cs = await suite();
    const group = this.groups.get(conversationId)!;
    const body = Buffer.from(JSON.stringify({ text }), 'utf8');
    const opening = opts.opening ?? randomBytes(32);
    const plaintext = Buffer.concat([opening, body]);
    const created = await createApplicationMessage(group.state, new Uint8Array(plaintext), cs);
    group.state = created.newState;
    return this.t.gql(
      `mutation($i: SendEncryptedMessageInput!) { sendEncryptedMessage(input: $i) { ${MESSAGE_FIELDS} } }`,
      {
        i: {
          conversationId,
          incarnation: group.incarnation,
          epoch: Number(group.state.groupContext.epoch),
          ciphertext: b64(
            encodeMlsMessage({
              privateMessage: created.privateMessage,
              wireformat: 'mls_private_message',
              version: 'mls10',
            }),
          ),
          frankingCommitment: b64(
            opts.commitmentOverride ?? commitment(opening, conversationId, body),
          ),
          threadRootId: opts.threadRootId,
        },
      },
      this.agent,
    );
  }

  async send(conversationId: string, text: string) {
    return ok(await this.sendRaw(conversationId, text)).sendEncryptedMessage;
  }

  /**
   * Decrypts a message as the server delivered it and checks its franking commitment (a message
   * whose commitment does not open is dropped).
   */
  async decrypt(
    conversationId: string,
    message: { ciphertext: string; mls: { frankingCommitment: string } },
  ): Promise<Received> {
    const cs = await suite();
    const group = this.groups.get(conversationId)!;
    const msg = decodeMlsMessage(unb64(message.ciphertext), 0)![0];
    if (msg.wireformat !== 'mls_private_message') throw new Error('not a private message');
    const result = await processMessage(msg, group.state, emptyPskIndex, acceptAll, cs);
    group.state = result.newState;
    if (result.kind !== 'applicationMessage') throw new Error('not an application message');
    const plaintext = Buffer.from(result.message);
    const opening = plaintext.subarray(0, 32);
    const body = plaintext.subarray(32);
    const expected = commitment(opening, conversationId, body);
    if (!expected.equals(Buffer.from(message.mls.frankingCommitment, 'base64url'))) {
      throw new Error('the franking commitment does not open: message dropped');
    }
    return {
      text: (JSON.parse(body.toString('utf8')) as { text: string }).text,
      body: body.toString('utf8'),
      opening: opening.toString('base64url'),
    };
  }

  /** The conversation's messages as the server lists them (oldest first). */
  async messages(conversationId: string) {
    return ok(
      await this.t.gql(
        `query($c: ID!) { messages(conversationId: $c) { items { ${MESSAGE_FIELDS} } } }`,
        { c: conversationId },
        this.agent,
      ),
    ).messages.items as Array<{
      id: string;
      ciphertext: string;
      text: string | null;
      author: { id: string };
      mls: { epoch: number; frankingCommitment: string; frankingTag: string };
    }>;
  }
}
