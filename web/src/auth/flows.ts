import { gql } from '../api/graphql.ts';
import {
  KEY_CHALLENGE,
  LINK_OFFER_STATUS,
  LOGIN,
  LOGIN_WITH_KEY,
  SEND_LINK_OFFER,
  SIGNUP_WITH_INVITE,
  SIGNUP_WITH_KEY,
} from '../api/queries.ts';
import { serverInfo } from '../state/store.ts';

import {
  newKeyPair,
  publicKeyOf,
  sign,
  statement,
  storeAccount,
  type StoredAccount,
} from './keys.ts';
import { proofOfWork } from './pow.ts';

interface SessionPayload {
  csrfToken: string;
  serverId: string | null;
}
interface Challenge {
  challengeId: string;
  nonce: string;
  serverKey: string;
}

async function challenge(): Promise<Challenge> {
  return (await gql<{ keyLoginChallenge: Challenge }>(KEY_CHALLENGE)).keyLoginChallenge;
}

export async function passwordLogin(username: string, password: string): Promise<SessionPayload> {
  const d = await gql<{ login: SessionPayload }>(LOGIN, { input: { username, password } });
  return d.login;
}

export async function keyLogin(account: StoredAccount): Promise<SessionPayload> {
  const c = await challenge();
  const issuedAt = new Date().toISOString();
  const text = statement('login', c, issuedAt, [['device', account.devicePublicKey]]);
  const d = await gql<{ loginWithKey: SessionPayload }>(LOGIN_WITH_KEY, {
    proof: {
      challengeId: c.challengeId,
      devicePublicKey: account.devicePublicKey,
      issuedAt,
      signature: await sign(account.device.privateKey, text),
    },
  });
  return d.loginWithKey;
}

export interface SignupInput {
  username: string;
  displayName: string;
  inviteToken: string;
  acceptedTerms: boolean;
  /** Password signups only (where the server does not require keys). */
  password?: string;
  email?: string;
  deviceName: string;
}

function common(input: SignupInput, pow: { challengeId: string; nonce: string } | null) {
  const terms = serverInfo.value?.termsUrl;
  return {
    username: input.username,
    displayName: input.displayName.trim() || null,
    inviteToken: input.inviteToken.trim() || null,
    acceptedTermsUrl: terms && input.acceptedTerms ? terms : null,
    pow,
  };
}

/**
 * Creates a key account: an identity key and this browser's device key, both signing the
 * `signup` statement. The keys are kept in this browser once the server accepted them.
 */
export async function keySignup(
  input: SignupInput,
  progress: (tried: number, bits: number) => void,
): Promise<SessionPayload> {
  const pow = await proofOfWork(progress);
  const identity = await newKeyPair(true);
  const device = await newKeyPair(false);
  const identityPublicKey = await publicKeyOf(identity);
  const devicePublicKey = await publicKeyOf(device);
  const c = await challenge();
  const issuedAt = new Date().toISOString();
  const text = statement('signup', c, issuedAt, [
    ['username', input.username],
    ['identity', identityPublicKey],
    ['device', devicePublicKey],
  ]);
  const d = await gql<{ signupWithKey: SessionPayload }>(SIGNUP_WITH_KEY, {
    input: {
      ...common(input, pow),
      identityPublicKey,
      devicePublicKey,
      deviceName: input.deviceName,
      challengeId: c.challengeId,
      issuedAt,
      identitySignature: await sign(identity.privateKey, text),
      deviceSignature: await sign(device.privateKey, text),
    },
  });
  await storeAccount({
    username: input.username,
    devicePublicKey,
    device,
    identity,
    createdAt: issuedAt,
  });
  return d.signupWithKey;
}

export async function passwordSignup(
  input: SignupInput,
  progress: (tried: number, bits: number) => void,
): Promise<SessionPayload> {
  const pow = await proofOfWork(progress);
  const d = await gql<{ signupWithInvite: SessionPayload }>(SIGNUP_WITH_INVITE, {
    input: {
      ...common(input, pow),
      password: input.password,
      email: input.email?.trim() || null,
    },
  });
  return d.signupWithInvite;
}

/**
 * Adds this browser to a key account signed in on another device (docs/keys.md, "Linking
 * another device"): offers a new device key, shows the code the person types on the signed-in
 * device, waits for the approval, then signs in with the new key and keeps it.
 */
export async function linkDevice(
  username: string,
  deviceName: string,
  showCode: (code: string, expiresAt: string) => void,
  cancelled: () => boolean,
): Promise<SessionPayload> {
  const device = await newKeyPair(false);
  const devicePublicKey = await publicKeyOf(device);
  const c = await challenge();
  const issuedAt = new Date().toISOString();
  const text = statement('device-link', c, issuedAt, [
    ['username', username],
    ['device', devicePublicKey],
  ]);
  const d = await gql<{
    sendDeviceLinkOffer: { offerId: string; code: string; offerSecret: string; expiresAt: string };
  }>(SEND_LINK_OFFER, {
    input: {
      username,
      devicePublicKey,
      deviceName,
      challengeId: c.challengeId,
      issuedAt,
      signature: await sign(device.privateKey, text),
    },
  });
  const offer = d.sendDeviceLinkOffer;
  showCode(offer.code, offer.expiresAt);
  for (;;) {
    await new Promise((r) => setTimeout(r, 2000));
    if (cancelled()) throw new LinkEnded('CANCELLED');
    const s = await gql<{ deviceLinkOfferStatus: string }>(LINK_OFFER_STATUS, {
      id: offer.offerId,
      secret: offer.offerSecret,
    });
    if (s.deviceLinkOfferStatus === 'APPROVED') break;
    if (s.deviceLinkOfferStatus !== 'PENDING') throw new LinkEnded(s.deviceLinkOfferStatus);
  }
  const account = { username, devicePublicKey, device, createdAt: new Date().toISOString() };
  const session = await keyLogin(account);
  await storeAccount(account);
  return session;
}

/** A device link that ended without approval: cancelled, or expired. */
export class LinkEnded extends Error {
  constructor(readonly state: string) {
    super(`device link ${state.toLowerCase()}`);
  }
}

/** A name for this browser's device: the browser and system, as the person would say it. */
export function defaultDeviceName(): string {
  const ua = navigator.userAgent;
  const browser = /Firefox\//.test(ua)
    ? 'Firefox'
    : /Edg\//.test(ua)
      ? 'Edge'
      : /Chrom(e|ium)\//.test(ua)
        ? 'Chromium'
        : /Safari\//.test(ua)
          ? 'Safari'
          : 'Browser';
  const os = /Android/.test(ua)
    ? 'Android'
    : /iPhone|iPad/.test(ua)
      ? 'iOS'
      : /Mac OS/.test(ua)
        ? 'macOS'
        : /Windows/.test(ua)
          ? 'Windows'
          : /Linux/.test(ua)
            ? 'Linux'
            : '';
  return `${browser}${os ? ` on ${os}` : ''}`;
}
