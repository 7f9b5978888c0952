import { ApiError, csrfToken, NETWORK } from '../api/graphql.ts';
import { b64url } from '../auth/statement.ts';
import { storedAccounts } from '../auth/keys.ts';
import { me } from '../state/store.ts';

import { fromB64url, HostKeyError, hostKeys, verifyEd25519 } from './host-key.ts';

// A request to a space on another server (docs/federation.md, "The relay route"): the app talks
// only to its own server, at `/api/remote/<host>/<path>`, with a device request signed by this
// browser's device key (the one its session is bound to), and believes an answer only when the
// host's signed statement about it verifies with the host's pinned key and names this request,
// its status and its body.

export const UPSTREAM_UNAVAILABLE = 'UPSTREAM_UNAVAILABLE';

export interface RemoteAnswer {
  status: number;
  headers: Headers;
  bytes: Uint8Array<ArrayBuffer>;
  text(): string;
  json<T = unknown>(): T;
}

async function digestOf(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  let s = '';
  for (const x of d) s += String.fromCharCode(x);
  return `sha-256=:${btoa(s)}:`;
}

/** The device key of the signed-in person in this browser, or null (a password session). */
async function deviceKey(): Promise<{ publicKey: string; privateKey: CryptoKey } | null> {
  const username = me.value?.username.toLowerCase();
  if (!username) return null;
  const acc = (await storedAccounts()).find((a) => a.username === username);
  return acc ? { publicKey: acc.devicePublicKey, privateKey: acc.device.privateKey } : null;
}

function nonce(): string {
  return b64url(crypto.getRandomValues(new Uint8Array(18)));
}

/** The refusal the relay or the host answered, as an ApiError the screens explain in words. */
function refusal(host: string, status: number, headers: Headers, text: string): ApiError {
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: the status says enough
  }
  const error = typeof body.error === 'string' ? body.error : `http_${status}`;
  const message = typeof body.message === 'string' ? body.message : error;
  const ext: Record<string, unknown> = { status, error, hostServerId: host };
  const retry = Number(headers.get('retry-after') ?? body.retryAfterSeconds);
  if (Number.isFinite(retry) && retry > 0) ext.retryAfterSeconds = retry;
  if (status === 502 || error === 'upstream_unavailable') {
    return new ApiError(message, UPSTREAM_UNAVAILABLE, ext);
  }
  if (status === 429) return new ApiError(message, 'RATE_LIMITED', ext);
  if (body.code === 'FEATURE_DISABLED') {
    return new ApiError(message, 'FEATURE_DISABLED', { ...ext, feature: body.feature });
  }
  return new ApiError(message, 'REMOTE_REFUSED', ext);
}

/** Checks the host's statement about this answer (docs/federation.md, "Host responses"). */
async function checkAnswer(
  host: string,
  requestNonce: string,
  status: number,
  headers: Headers,
  bytes: Uint8Array<ArrayBuffer>,
): Promise<void> {
  const statement = headers.get('svc-host-response');
  const signature = headers.get('svc-host-signature');
  if (!statement || !signature) {
    throw new ApiError('the answer carries no signature of the host', UPSTREAM_UNAVAILABLE, {
      hostServerId: host,
    });
  }
  let s: Record<string, unknown>;
  try {
    s = JSON.parse(new TextDecoder().decode(fromB64url(statement))) as Record<string, unknown>;
  } catch {
    throw new ApiError("the host's statement is unreadable", UPSTREAM_UNAVAILABLE, {
      hostServerId: host,
    });
  }
  let keys = await hostKeys(host);
  // A key the pin does not know as current: the host may have rotated; read its log again.
  if (s.key !== keys.at(-1)) keys = await hostKeys(host, true);
  const key = keys.at(-1)!;
  const ok =
    s.key === key &&
    (await verifyEd25519(key, new TextEncoder().encode(statement), signature)) &&
    s.type === 'svc.host-response.v1' &&
    s.host === host &&
    s.request === requestNonce &&
    s.status === status &&
    s.digest === (await digestOf(bytes));
  if (!ok) {
    throw new ApiError(
      'the answer is not the host’s signed answer to this request',
      UPSTREAM_UNAVAILABLE,
      { hostServerId: host },
    );
  }
}

/**
 * Sends one request to `path` on `host` through this server. Answers the host's verified answer
 * whatever its status (GraphQL errors are in its body); throws an ApiError for the relay's own
 * refusals, an answer that is not verified, and a host that could not be reached.
 */
export async function remoteFetch(
  host: string,
  method: 'GET' | 'POST',
  path: string,
  body: Uint8Array<ArrayBuffer> = new Uint8Array(0),
  contentType: string | null = null,
): Promise<RemoteAnswer> {
  const device = await deviceKey();
  if (!device) {
    throw new ApiError('this browser holds no device key for the account', 'NO_DEVICE_KEY', {
      hostServerId: host,
    });
  }
  const n = nonce();
  const request = b64url(
    new TextEncoder().encode(
      JSON.stringify({
        type: 'svc.device-request.v1',
        host,
        method,
        path,
        digest: await digestOf(body),
        device: device.publicKey,
        issuedAt: new Date().toISOString(),
        nonce: n,
      }),
    ),
  );
  const signature = b64url(
    await crypto.subtle.sign(
      { name: 'Ed25519' },
      device.privateKey,
      new TextEncoder().encode(request),
    ),
  );
  const headers: Record<string, string> = {
    'svc-device-request': request,
    'svc-device-signature': signature,
    'x-csrf-token': csrfToken(),
  };
  if (contentType) headers['content-type'] = contentType;
  let res: Response;
  try {
    res = await fetch(`/api/remote/${host}${path}`, {
      method,
      credentials: 'same-origin',
      headers,
      body: method === 'POST' ? body : undefined,
    });
  } catch {
    throw new ApiError('the server could not be reached', NETWORK);
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  const signed = res.headers.has('svc-host-signature');
  if (!signed) {
    // The relay's own refusal, or a host that gave no verified answer (502).
    throw refusal(host, res.status, res.headers, new TextDecoder().decode(bytes));
  }
  try {
    await checkAnswer(host, n, res.status, res.headers, bytes);
  } catch (err) {
    if (err instanceof HostKeyError) {
      throw new ApiError(err.message, UPSTREAM_UNAVAILABLE, { hostServerId: host });
    }
    throw err;
  }
  const answer: RemoteAnswer = {
    status: res.status,
    headers: res.headers,
    bytes,
    text: () => new TextDecoder().decode(bytes),
    json: <T>() => JSON.parse(answer.text()) as T,
  };
  if (res.status >= 400 && !res.headers.get('content-type')?.includes('json')) {
    throw refusal(host, res.status, res.headers, answer.text());
  }
  return answer;
}

/** One GraphQL request (or batch) to the host's `/api`; answers the parsed body. */
export async function remotePost(host: string, body: unknown): Promise<unknown> {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const a = await remoteFetch(host, 'POST', '/api', bytes, 'application/json');
  if (a.status >= 400) {
    // A signed refusal before GraphQL ran (401 device request refused, 403, 429): in words.
    let parsed: unknown = null;
    try {
      parsed = a.json();
    } catch {
      // not JSON
    }
    if (!(parsed && typeof parsed === 'object' && ('data' in parsed || 'errors' in parsed))) {
      throw refusal(host, a.status, a.headers, a.text());
    }
    return parsed;
  }
  return a.json();
}

/**
 * A form to one of the host's upload routes (`POST /api/files/upload`), as multipart bytes the
 * device signs. A refusal reads as this server's own would (413 too large, 415 a type refused).
 */
export async function remoteUpload(host: string, path: string, form: FormData): Promise<unknown> {
  const encoded = new Response(form);
  const bytes = new Uint8Array(await encoded.arrayBuffer());
  const a = await remoteFetch(host, 'POST', path, bytes, encoded.headers.get('content-type'));
  let body: Record<string, unknown> = {};
  try {
    body = a.json<Record<string, unknown>>();
  } catch {
    // not JSON
  }
  if (a.status < 400) return body;
  const error = typeof body.error === 'string' ? body.error : `http_${a.status}`;
  const ext = { status: a.status, error, hostServerId: host, feature: body.feature };
  if (body.code === 'FEATURE_DISABLED') throw new ApiError(error, 'FEATURE_DISABLED', ext);
  if (a.status === 429) throw refusal(host, a.status, a.headers, a.text());
  throw new ApiError(error, 'HTTP', ext);
}

/** A file of a host through the relay's download route, checked like every answer. */
export async function remoteDownload(host: string, url: string): Promise<Blob> {
  const a = await remoteFetch(host, 'GET', url);
  if (a.status >= 400) throw refusal(host, a.status, a.headers, a.text());
  return new Blob([a.bytes], { type: a.headers.get('content-type') ?? 'application/octet-stream' });
}
