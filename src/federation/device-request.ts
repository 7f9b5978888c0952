import { sign, type KeyObject } from 'node:crypto';

import { verifyWithRawPublic } from '../services/instance/index.js';

import { contentDigest } from './http-signature.js';

// The statements a client and a host exchange through a relay (docs/federation.md, "Device
// requests and host responses"). Each header value is the unpadded base64url of a JSON object;
// the signature (Ed25519, unpadded base64url) is over the header value's ASCII bytes as sent, so
// nobody ever re-serializes JSON to verify.

export const DEVICE_REQUEST = 'svc-device-request';
export const DEVICE_SIGNATURE = 'svc-device-signature';
export const HOST_RESPONSE = 'svc-host-response';
export const HOST_SIGNATURE = 'svc-host-signature';
/** The relay's statement of whose device a request comes from (covered by its signature). */
export const RELAY_VOUCH = 'svc-relay-vouch';

export interface DeviceRequest {
  type: 'svc.device-request.v1';
  /** The host's server id: the request is useless at any other server. */
  host: string;
  method: string;
  /** Host-relative path with query, e.g. `/api`. */
  path: string;
  /** Content-Digest of the body (`sha-256=:<base64>:`), the empty body's for GET. */
  digest: string;
  /** The device's key, raw base64url. */
  device: string;
  /** RFC 3339; within five minutes of the host's clock. */
  issuedAt: string;
  /** 16 to 128 characters, never reused by the device. */
  nonce: string;
}

export interface HostResponse {
  type: 'svc.host-response.v1';
  host: string;
  /** The nonce of the device request answered. */
  request: string;
  status: number;
  /** Content-Digest of the answer's body. */
  digest: string;
  /**
   * The host's current key, so a relay that pinned an older one follows the rotation through
   * the key log (a key the log does not lead to is refused).
   */
  key?: string;
}

export interface RelayVouch {
  /** The person's username at the relay. */
  user: string;
  /** The device key the relay signed them in with. */
  device: string;
  displayName: string | null;
}

export const encodeStatement = (value: object): string =>
  Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/** Decodes a header statement; null when it is not base64url JSON of an object. */
export function decodeStatement<T>(header: string | undefined): T | null {
  if (!header || !/^[A-Za-z0-9_-]{1,8192}$/.test(header)) return null;
  try {
    const v = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as T) : null;
  } catch {
    return null;
  }
}

/** Signs a header value with an Ed25519 key (device or server). */
export const signHeader = (header: string, key: KeyObject): string =>
  sign(null, Buffer.from(header, 'ascii'), key).toString('base64url');

export const verifyHeader = (header: string, signature: string, rawKey: string): boolean =>
  verifyWithRawPublic(rawKey, Buffer.from(header, 'ascii'), signature);

/** A host's signed answer to a device request. */
export function hostResponseHeaders(
  o: { host: string; requestNonce: string; status: number; body: Buffer; key?: string },
  key: KeyObject,
): Record<string, string> {
  const statement: HostResponse = {
    type: 'svc.host-response.v1',
    host: o.host,
    request: o.requestNonce,
    status: o.status,
    digest: contentDigest(o.body),
    ...(o.key ? { key: o.key } : {}),
  };
  const value = encodeStatement(statement);
  return { [HOST_RESPONSE]: value, [HOST_SIGNATURE]: signHeader(value, key) };
}

/**
 * Whether a host's answer is verified: its statement is signed by the host's key and names this
 * host, the request's nonce, the status and the body received.
 */
export function hostResponseVerifies(o: {
  host: string;
  hostKey: string;
  requestNonce: string | null;
  status: number;
  body: Buffer;
  response: string | undefined;
  signature: string | undefined;
}): boolean {
  if (!o.response || !o.signature) return false;
  if (!verifyHeader(o.response, o.signature, o.hostKey)) return false;
  const s = decodeStatement<HostResponse>(o.response);
  return (
    s !== null &&
    s.type === 'svc.host-response.v1' &&
    s.host === o.host &&
    s.request === o.requestNonce &&
    s.status === o.status &&
    s.digest === contentDigest(o.body)
  );
}
