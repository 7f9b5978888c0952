// GraphQL over HTTP (POST /api), like any third-party client: JSON body, the session cookie, and
// the CSRF token in `X-CSRF-Token` on every request (the server needs it on mutations only, and
// ignores it elsewhere).

/** An error the API answered, or a failure to reach it. `code` is the contract's code. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly extensions: Record<string, unknown> = {},
    readonly requestId: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Codes the client makes up for failures before the API answers (never sent by the server). */
export const NETWORK = 'NETWORK';
export const HTTP = 'HTTP';
/** A GraphQL error without a code (a document the server refused, or the CSRF refusal). */
export const NO_CODE = 'NO_CODE';
/** A workspace plugin's code failed, was refused, or was stopped in its sandbox (plugins/). */
export const PLUGIN_CODE = 'PLUGIN_CODE';

let csrfInMemory: string | null = null;

/** Keeps the `csrfToken` a sign-in answered, for when the cookie cannot be read. */
export function rememberCsrf(token: string | null): void {
  csrfInMemory = token;
}

export function csrfToken(): string {
  const m = /(?:^|;\s*)svc_csrf=([^;]*)/.exec(document.cookie);
  return m ? decodeURIComponent(m[1] as string) : (csrfInMemory ?? '');
}

interface GraphqlError {
  message: string;
  extensions?: Record<string, unknown>;
}
interface GraphqlResponse<T> {
  data?: T | null;
  errors?: GraphqlError[];
}

function toApiError(e: GraphqlError, host: string | null = null): ApiError {
  // An error a host answered names the host, so its words can say where it came from.
  const ext = host ? { ...e.extensions, hostServerId: host } : (e.extensions ?? {});
  const code = typeof ext.code === 'string' ? ext.code : NO_CODE;
  const requestId = typeof ext.request_id === 'string' ? ext.request_id : null;
  return new ApiError(e.message, code, ext, requestId);
}

/** Refusals the server answers before GraphQL runs: `{"error": ...}` with a status. */
async function httpRefusal(res: Response): Promise<ApiError> {
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // not JSON: the status says enough
  }
  const error = typeof body.error === 'string' ? body.error : `http_${res.status}`;
  const retry = Number(res.headers.get('retry-after') ?? body.retryAfterSeconds);
  const ext: Record<string, unknown> = { status: res.status, error };
  if (Number.isFinite(retry)) ext.retryAfterSeconds = retry;
  if (res.status === 429 && error === 'rate_limited') {
    return new ApiError('too many requests', 'RATE_LIMITED', ext);
  }
  const message = typeof body.message === 'string' ? body.message : error;
  return new ApiError(message, HTTP, ext);
}

async function post(body: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch('/api', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken() },
      body: JSON.stringify(body),
    });
  } catch {
    throw new ApiError('the server could not be reached', NETWORK);
  }
  if (!res.ok) throw await httpRefusal(res);
  return res.json();
}

/**
 * Sends a multipart form to one of the file routes (`POST /api/files/...`), with the session and
 * the CSRF header; answers the JSON body. A refusal is an ApiError: `HTTP` with the status in
 * `extensions.status` (413 too large, 415 a type refused), or the feature's `FEATURE_DISABLED`.
 */
export async function postForm<T>(path: string, form: FormData): Promise<T> {
  // A file for a conversation of a host goes there through the relay route.
  const host = remote?.hostOf(form.get('attachment_id'));
  if (host && remote) return (await remote.upload(host, path, form)) as T;
  return postBody<T>(path, form);
}

/**
 * Sends a body to one of the upload routes with the session and the CSRF header (a form, or a
 * file as itself with its media type, as `POST /api/plugin-bundles/...` takes a bundle); answers
 * the JSON body, and refuses as `postForm` does.
 */
export async function postBody<T>(
  path: string,
  payload: FormData | Blob,
  contentType?: string,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: {
        'x-csrf-token': csrfToken(),
        ...(contentType ? { 'content-type': contentType } : {}),
      },
      body: payload,
    });
  } catch {
    throw new ApiError('the server could not be reached', NETWORK);
  }
  if (res.ok) return (await res.json()) as T;
  const err = await httpRefusal(res.clone());
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // not JSON
  }
  if (body.code === 'FEATURE_DISABLED') {
    throw new ApiError(err.message, 'FEATURE_DISABLED', {
      ...err.extensions,
      feature: body.feature,
    });
  }
  throw err;
}

/**
 * Spaces on other servers (web/src/remote): a request whose variables name something of a host
 * goes to that host through this server's relay route, and the ids of a host's answer are
 * remembered as the host's.
 */
export interface RemoteRoute {
  hostOf(variables: unknown): string | null;
  post(host: string, body: unknown): Promise<unknown>;
  tag(host: string, answer: unknown): void;
  upload(host: string, path: string, form: FormData): Promise<unknown>;
}
let remote: RemoteRoute | null = null;
export function routeRemote(r: RemoteRoute): void {
  remote = r;
}

async function postTo(host: string | null, body: unknown): Promise<unknown> {
  if (!host || !remote) return post(body);
  const answer = await remote.post(host, body);
  remote.tag(host, answer);
  return answer;
}

/** Runs one operation; answers its data or throws the first error as an ApiError. */
export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  return gqlAt<T>(remote?.hostOf(variables) ?? null, query, variables);
}

/** Runs one operation on a given server: null for this one, else a host's id (through the relay). */
export async function gqlAt<T>(
  host: string | null,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<T> {
  const res = (await postTo(host, { query, variables })) as GraphqlResponse<T>;
  if (res.errors?.length) throw toApiError(res.errors[0] as GraphqlError, host);
  if (res.data === null || res.data === undefined) throw new ApiError('no data', NO_CODE);
  return res.data;
}

/** One request of a batch; each answers on its own (data or error). */
export interface BatchItem {
  query: string;
  variables?: Record<string, unknown>;
}
export type BatchResult<T = unknown> = { data: T } | { error: ApiError };

/** Runs up to 20 operations in one HTTP request (the server's default batch size). */
export async function gqlBatch(items: BatchItem[]): Promise<BatchResult[]> {
  const out: BatchResult[] = new Array<BatchResult>(items.length);
  // Each server gets its own batches (this one, and each host through the relay).
  const byHost = new Map<string | null, number[]>();
  items.forEach((item, i) => {
    const host = remote?.hostOf(item.variables ?? {}) ?? null;
    byHost.set(host, [...(byHost.get(host) ?? []), i]);
  });
  await Promise.all(
    [...byHost].map(async ([host, indexes]) => {
      for (let i = 0; i < indexes.length; i += 20) {
        const chunk = indexes.slice(i, i + 20);
        let res: GraphqlResponse<unknown>[];
        try {
          res = (await postTo(
            host,
            chunk.map((k) => items[k]),
          )) as GraphqlResponse<unknown>[];
        } catch (err) {
          // A host that cannot be reached fails its own requests, not this server's.
          if (!host || !(err instanceof ApiError)) throw err;
          for (const k of chunk) out[k] = { error: err };
          continue;
        }
        chunk.forEach((k, j) => {
          const r = res[j] ?? { errors: [{ message: 'no answer' }] };
          out[k] = r.errors?.length ? { error: toApiError(r.errors[0]!, host) } : { data: r.data };
        });
      }
    }),
  );
  return out;
}
