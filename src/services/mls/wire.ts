import {
  decodeMlsMessage,
  getCiphersuiteFromName,
  getCiphersuiteImpl,
  type MLSMessage,
} from 'ts-mls';
import { makeKeyPackageRef, verifyKeyPackage, type KeyPackage } from 'ts-mls/keyPackage.js';

import { validation } from '../../errors.js';

// Reading the MLS wire format (RFC 9420) with ts-mls's decoder: the server parses what it must
// check (key packages, and the unencrypted header of handshake and application messages) and
// never decrypts anything.

/** The one cipher suite the server accepts key packages for (RFC 9420 suite 0x0001). */
export const SUPPORTED_SUITE = 'MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519' as const;

/** Bytes of an MLS value passed base64 or base64url; VALIDATION naming `what` when not. */
export function decodeBase64(value: unknown, what: string, maxChars: number): Buffer {
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > maxChars ||
    !/^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+)$/.test(value)
  ) {
    throw validation(
      `${what} must be base64 (standard or url-safe), at most ${maxChars} characters`,
    );
  }
  return Buffer.from(value, value.includes('+') || value.includes('/') ? 'base64' : 'base64url');
}

/** One whole MLSMessage of `bytes`, or VALIDATION. */
function decodeWhole(bytes: Buffer, what: string): MLSMessage {
  let decoded: [MLSMessage, number] | undefined;
  try {
    decoded = decodeMlsMessage(new Uint8Array(bytes), 0);
  } catch {
    decoded = undefined;
  }
  if (!decoded || decoded[1] !== bytes.length) {
    throw validation(`${what} is not an MLS message (RFC 9420 MLSMessage)`);
  }
  return decoded[0];
}

let suiteImpl: ReturnType<typeof getCiphersuiteImpl> | null = null;
const suite = () => (suiteImpl ??= getCiphersuiteImpl(getCiphersuiteFromName(SUPPORTED_SUITE)));

/** What the server learns of a valid key package. */
export interface CheckedKeyPackage {
  /** The basic credential's identity, as UTF-8 text. */
  identity: string;
  /** The lifetime's end, in ms (capped to a safe integer). */
  notAfter: number;
  /** The KeyPackageRef, base64url. */
  ref: string;
}

const MAX_SAFE_SECONDS = BigInt(Math.floor(Number.MAX_SAFE_INTEGER / 1000));

/**
 * Checks a KeyPackage (wire format mls_key_package): it parses, uses the supported cipher suite,
 * carries a basic credential, is signed by its own leaf's signature key, and its lifetime
 * includes `now`. VALIDATION saying which check failed.
 */
export async function checkKeyPackage(bytes: Buffer, now: number): Promise<CheckedKeyPackage> {
  const msg = decodeWhole(bytes, 'the key package');
  if (msg.wireformat !== 'mls_key_package') {
    throw validation(`the key package is an MLS ${msg.wireformat}, not mls_key_package`);
  }
  const kp: KeyPackage = msg.keyPackage;
  if (kp.cipherSuite !== SUPPORTED_SUITE) {
    throw validation(`the key package's cipher suite must be ${SUPPORTED_SUITE}`);
  }
  const credential = kp.leafNode.credential;
  if (credential.credentialType !== 'basic') {
    throw validation('the key package must carry a basic credential naming the device');
  }
  const impl = await suite();
  let signed = false;
  try {
    signed = await verifyKeyPackage(kp, impl.signature);
  } catch {
    signed = false;
  }
  if (!signed) throw validation('the key package signature does not verify');
  const lifetime = (kp.leafNode as { lifetime?: { notBefore: bigint; notAfter: bigint } }).lifetime;
  if (!lifetime) throw validation('the key package leaf carries no lifetime');
  const seconds = BigInt(Math.floor(now / 1000));
  if (lifetime.notAfter < seconds) throw validation('the key package has expired');
  if (lifetime.notBefore > seconds + 300n) throw validation('the key package is not valid yet');
  const capped = lifetime.notAfter > MAX_SAFE_SECONDS ? MAX_SAFE_SECONDS : lifetime.notAfter;
  return {
    identity: Buffer.from(credential.identity).toString('utf8'),
    notAfter: Number(capped) * 1000,
    ref: Buffer.from(await makeKeyPackageRef(kp, impl.hash)).toString('base64url'),
  };
}

/** The unencrypted header of a handshake or application message. */
export interface MessageHeader {
  groupId: Buffer;
  epoch: number;
  contentType: 'application' | 'proposal' | 'commit';
  wire: 'private' | 'public';
}

/** Reads the group, epoch and content type of an MLS PrivateMessage or PublicMessage. */
export function readHeader(bytes: Buffer, what: string): MessageHeader {
  const msg = decodeWhole(bytes, what);
  if (msg.wireformat === 'mls_private_message') {
    const pm = msg.privateMessage;
    return {
      groupId: Buffer.from(pm.groupId),
      epoch: Number(pm.epoch),
      contentType: pm.contentType as MessageHeader['contentType'],
      wire: 'private',
    };
  }
  if (msg.wireformat === 'mls_public_message') {
    const c = msg.publicMessage.content;
    return {
      groupId: Buffer.from(c.groupId),
      epoch: Number(c.epoch),
      contentType: c.contentType as MessageHeader['contentType'],
      wire: 'public',
    };
  }
  throw validation(`${what} must be an MLS private or public message, not ${msg.wireformat}`);
}

/**
 * Checks that `bytes` is a Welcome (wire format mls_welcome) of the supported suite; answers the
 * KeyPackageRefs (base64url) of the new members it is for.
 */
export function welcomeRefs(bytes: Buffer): string[] {
  const msg = decodeWhole(bytes, 'the welcome');
  if (msg.wireformat !== 'mls_welcome') {
    throw validation(`the welcome is an MLS ${msg.wireformat}, not mls_welcome`);
  }
  if (msg.welcome.cipherSuite !== SUPPORTED_SUITE) {
    throw validation(`the welcome's cipher suite must be ${SUPPORTED_SUITE}`);
  }
  return msg.welcome.secrets.map((s) => Buffer.from(s.newMember).toString('base64url'));
}
