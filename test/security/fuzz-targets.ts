import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

import fc from 'fast-check';

import { AppError } from '../../src/errors.js';
import {
  parseSignatureField,
  parseSignatureInputField,
  SignatureFormatError,
} from '../../src/federation/http-signature.js';
import { isServerId } from '../../src/lib/server-id.js';
import { decodeHtml, parseHtml } from '../../src/services/link-previews/html-meta.js';
import { readHeader } from '../../src/services/mls/wire.js';
import { agentHeaders, type Agent, type TestApp } from '../_util/app.js';

// The parsers that take outside input, fed generated input for a bounded time (issue 48, item
// 6): GraphQL documents, multipart forms, plugin bundles, RFC 9421 signature fields, host ids,
// link-preview HTML in any charset, MLS messages. The rule for every one: no 5xx, no INTERNAL,
// no exception other than the parser's own refusal. `npm test` runs each for a moment
// (fuzz.test.ts); `npm run fuzz -- <seconds>` runs them longer (scripts/fuzz.ts).

export interface FuzzWorld {
  t: TestApp;
  agent: Agent;
  workspace: string;
  conversation: string;
}

export interface FuzzTarget<T = unknown> {
  name: string;
  /** The generated input. */
  input: fc.Arbitrary<T>;
  /** Feeds one input to the parser; throws on a finding. */
  check(w: FuzzWorld, input: T): void | Promise<void>;
}

export const fuzz = <T>(target: FuzzTarget<T>): FuzzTarget => target as unknown as FuzzTarget;

/** Fails on a 5xx, or on an INTERNAL or code-less resolver error in a GraphQL answer. */
function assertAnswered(what: string, status: number, body: string): void {
  if (status >= 500) throw new Error(`${what}: HTTP ${status} ${body.slice(0, 200)}`);
  if (!body.startsWith('{') && !body.startsWith('[')) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new Error(`${what}: answered JSON that does not parse: ${body.slice(0, 200)}`);
  }
  for (const answer of [parsed].flat() as Array<{
    errors?: Array<{ path?: unknown; extensions?: { code?: string } }>;
  }>) {
    for (const e of answer?.errors ?? []) {
      if (e.extensions?.code === 'INTERNAL')
        throw new Error(`${what}: INTERNAL ${body.slice(0, 300)}`);
      if (e.path && !e.extensions?.code)
        throw new Error(`${what}: an error without a code ${body.slice(0, 300)}`);
    }
  }
}

/** Only the parser's own refusal may escape it. */
function refusedOnly(
  what: string,
  run: () => unknown,
  ...allowed: Array<new (...a: any[]) => Error>
) {
  try {
    run();
  } catch (err) {
    if (allowed.some((c) => err instanceof c)) return;
    throw new Error(`${what} threw ${String(err)}`);
  }
}

const word = fc.constantFrom(
  'me',
  'serverInfo',
  'messages',
  'conversation',
  'id',
  'text',
  'items',
  'author',
  'sendMessage',
  'input',
  'conversationId',
  'query',
  'mutation',
  'subscription',
  'fragment',
  'on',
  'Message',
  '__typename',
  '__schema',
  'types',
  'name',
  'limit',
  '$v',
  'String',
  'ID!',
  'true',
  'null',
);
const punct = fc.constantFrom(
  '{',
  '}',
  '(',
  ')',
  ':',
  '...',
  '@skip(if: true)',
  ',',
  '"',
  '"x"',
  '1',
  '$',
  '!',
  '[',
  ']',
  '=',
  '#',
  '\n',
  ' ',
);
const graphqlText = fc
  .array(fc.oneof(word, punct, fc.string({ maxLength: 6 })), { maxLength: 120 })
  .map((t) => t.join(' '));

const header = (n: string, v: string) => `${n}: ${v}\r\n`;
const multipartBody = fc.record({
  boundary: fc.stringMatching(/^[A-Za-z0-9'()+_,./:=?-]{1,70}$/),
  declared: fc.option(fc.stringMatching(/^[A-Za-z0-9-]{0,20}$/)),
  parts: fc.array(
    fc.record({
      name: fc.oneof(
        fc.constantFrom('file', 'upload_token', 'attachment_id', ''),
        fc.string({ maxLength: 10 }),
      ),
      filename: fc.option(fc.string({ maxLength: 20 })),
      type: fc.option(
        fc.constantFrom('image/png', 'text/plain', 'application/octet-stream', 'x/y;;', ''),
      ),
      body: fc.uint8Array({ maxLength: 300 }),
    }),
    { maxLength: 4 },
  ),
  truncate: fc.option(fc.nat(400)),
});

export const FUZZ_TARGETS: FuzzTarget[] = [
  fuzz({
    name: 'GraphQL documents (POST /api)',
    input: fc.tuple(
      graphqlText,
      fc.option(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }))),
    ),
    check: async (w, [query, variables]) => {
      const res = await w.t.inject({
        method: 'POST',
        url: '/api',
        headers: { 'content-type': 'application/json', ...agentHeaders(w.agent) },
        payload: JSON.stringify({ query, variables }),
      });
      assertAnswered(`document ${JSON.stringify(query)}`, res.statusCode, res.body);
    },
  }),
  fuzz({
    name: 'multipart forms (POST /api/files/upload, /api/files/avatar)',
    input: fc.tuple(multipartBody, fc.boolean()),
    check: async (w, [m, avatar]) => {
      let body = Buffer.concat([
        ...m.parts.flatMap((p) => [
          Buffer.from(
            `--${m.boundary}\r\n` +
              header(
                'content-disposition',
                `form-data; name="${p.name}"${p.filename === null ? '' : `; filename="${p.filename}"`}`,
              ) +
              (p.type === null ? '' : header('content-type', p.type)) +
              '\r\n',
          ),
          Buffer.from(p.body),
          Buffer.from('\r\n'),
        ]),
        Buffer.from(`--${m.boundary}--\r\n`),
      ]);
      if (m.truncate !== null) body = body.subarray(0, m.truncate);
      const res = await w.t.inject({
        method: 'POST',
        url: avatar ? '/api/files/avatar' : '/api/files/upload',
        headers: {
          'content-type': `multipart/form-data; boundary=${m.declared ?? m.boundary}`,
          ...agentHeaders(w.agent),
        },
        payload: body,
      });
      assertAnswered('multipart', res.statusCode, res.body);
    },
  }),
  fuzz({
    name: 'plugin bundles (POST /api/plugin-bundles/:serverId)',
    input: fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 300 }),
      fc
        .record({
          name: fc.string(),
          version: fc.string(),
          commands: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
        })
        .map((v) => JSON.stringify(v)),
    ),
    check: async (w, text) => {
      const res = await w.t.inject({
        method: 'POST',
        url: `/api/plugin-bundles/${w.workspace}`,
        headers: {
          'content-type': 'application/vnd.svc.plugin-bundle+json',
          ...agentHeaders(w.agent),
        },
        payload: text,
      });
      assertAnswered('bundle', res.statusCode, res.body);
    },
  }),
  fuzz({
    name: 'RFC 9421 Signature-Input and Signature fields (parser and /s2s/v1)',
    input: fc.tuple(
      fc
        .array(
          fc.oneof(
            fc.constantFrom(
              'sig1',
              '=',
              '(',
              ')',
              '"@method"',
              '"@path"',
              ';',
              'created=',
              'keyid=',
              '"k"',
              ':',
              'AAAA',
              ',',
              ' ',
              '1700000000',
            ),
            fc.string({ maxLength: 5 }),
          ),
          { maxLength: 30 },
        )
        .map((a) => a.join('')),
      fc
        .array(
          fc.oneof(
            fc.constantFrom('sig1', '=', ':', 'AAAA', ';', ','),
            fc.base64String({ maxLength: 90 }),
          ),
          { maxLength: 10 },
        )
        .map((a) => a.join('')),
    ),
    check: async (w, [input, signature]) => {
      refusedOnly(
        'parseSignatureInputField',
        () => parseSignatureInputField(input),
        SignatureFormatError,
      );
      refusedOnly(
        'parseSignatureField',
        () => parseSignatureField(signature),
        SignatureFormatError,
      );
      const res = await w.t.inject({
        method: 'GET',
        url: '/s2s/v1/ping',
        headers: {
          'signature-input': input.replace(/[\r\n]/g, ' '),
          signature: signature.replace(/[\r\n]/g, ' '),
        },
      });
      assertAnswered('s2s', res.statusCode, res.body);
    },
  }),
  fuzz({
    name: 'host ids (isServerId and /api/remote/{host})',
    input: fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.domain(),
      fc.ipV6(),
      fc.tuple(fc.ipV4(), fc.nat(70000)).map(([a, p]) => `${a}:${p}`),
    ),
    check: async (w, host) => {
      refusedOnly('isServerId', () => isServerId(host));
      const res = await w.t.inject({
        method: 'GET',
        url: `/api/remote/${encodeURIComponent(host)}/api/sdl`,
        headers: agentHeaders(w.agent),
      });
      assertAnswered(`host ${JSON.stringify(host)}`, res.statusCode, res.body);
    },
  }),
  fuzz({
    name: 'link-preview HTML in any charset',
    input: fc.tuple(
      fc.oneof(
        fc.uint8Array({ maxLength: 600 }).map((b) => Buffer.from(b)),
        fc
          .array(
            fc.oneof(
              fc.constantFrom(
                '<meta property="og:title" content="',
                '<meta charset="',
                'utf-16',
                'shift_jis',
                '">',
                '<title>',
                '</title>',
                '<head>',
                '<!--',
                '&amp;',
                '&#x0;',
                '\u202e',
                '\ufeff',
              ),
              fc.string({ maxLength: 8 }),
            ),
            { maxLength: 40 },
          )
          .map((a) => Buffer.from(a.join(''))),
      ),
      fc.option(
        fc.constantFrom(
          'utf-8',
          'utf-16le',
          'iso-8859-1',
          'windows-1252',
          'shift_jis',
          'euc-kr',
          'nonsense',
          '',
        ),
      ),
    ),
    check: (_w, [body, charset]) => {
      refusedOnly('parseHtml', () =>
        parseHtml(decodeHtml(body, charset), 'https://example.org/page'),
      );
    },
  }),
  fuzz({
    name: 'MLS messages (readHeader and sendEncryptedMessage)',
    input: fc.tuple(
      fc.oneof(
        fc.uint8Array({ maxLength: 200 }),
        fc
          .tuple(
            fc.constantFrom(0, 1),
            fc.constantFrom(1, 2, 3, 4, 5),
            fc.uint8Array({ maxLength: 120 }),
          )
          .map(([a, b, rest]) => new Uint8Array([0, 1, a, b, ...rest])),
      ),
      fc.uint8Array({ minLength: 0, maxLength: 40 }),
    ),
    check: async (w, [bytes, commitment]) => {
      refusedOnly('readHeader', () => readHeader(Buffer.from(bytes), 'the message'), AppError);
      const res = await w.t.inject({
        method: 'POST',
        url: '/api',
        headers: { 'content-type': 'application/json', ...agentHeaders(w.agent) },
        payload: JSON.stringify({
          query:
            'mutation($i: SendEncryptedMessageInput!) { sendEncryptedMessage(input: $i) { id } }',
          variables: {
            i: {
              conversationId: w.conversation,
              incarnation: 1,
              epoch: 0,
              ciphertext: Buffer.from(bytes).toString('base64url'),
              frankingCommitment: Buffer.from(commitment).toString('base64url'),
            },
          },
        }),
      });
      assertAnswered('sendEncryptedMessage', res.statusCode, res.body);
    },
  }),
];

/** What a parser may use while it is fed, beyond what the process held before (issue 48). */
export const MEMORY_BOUNDS = {
  /** Heap still held after a collection once a target's inputs are done: a leak per input. */
  retainedMiB: 64,
  /** Growth of the process's peak resident memory while one target runs: a blow-up. */
  peakMiB: 256,
};

export interface FuzzRun {
  /** Inputs tried. */
  runs: number;
  /** Heap held after a collection, beyond the heap before the target ran (MiB). */
  retainedMiB: number;
  /** How far the process's peak resident memory rose while the target ran (MiB). */
  peakMiB: number;
}

const MIB = 1024 * 1024;

/**
 * A full collection, to tell what a target keeps from what it merely has not freed yet. `gc` is
 * exposed for this process here (V8's flag, then a fresh context to take the function from), so
 * the check needs no flag on the command line.
 */
function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/**
 * Runs every target, each for `runs` inputs or, with `ms`, for about that long; throws on the
 * first finding (with the shrunk input and the seed to replay it), and on a target that keeps
 * or peaks past MEMORY_BOUNDS.
 */
export async function fuzzAll(
  w: FuzzWorld,
  budget: { runs: number } | { ms: number },
  seed?: number,
  targets: readonly FuzzTarget[] = FUZZ_TARGETS,
): Promise<Record<string, FuzzRun>> {
  const gc = collector();
  const out: Record<string, FuzzRun> = {};
  for (const target of targets) {
    let count = 0;
    const property = fc.asyncProperty(target.input, async (input: unknown) => {
      count++;
      await target.check(w, input);
    });
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const peakBefore = process.resourceUsage().maxRSS * 1024;
    await fc.assert(property, {
      ...('ms' in budget
        ? { numRuns: Number.MAX_SAFE_INTEGER, interruptAfterTimeLimit: budget.ms }
        : { numRuns: budget.runs }),
      seed,
    });
    gc();
    const run: FuzzRun = {
      runs: count,
      retainedMiB: Math.max(0, process.memoryUsage().heapUsed - heapBefore) / MIB,
      peakMiB: (process.resourceUsage().maxRSS * 1024 - peakBefore) / MIB,
    };
    if (run.retainedMiB > MEMORY_BOUNDS.retainedMiB || run.peakMiB > MEMORY_BOUNDS.peakMiB) {
      throw new Error(
        `${target.name} kept ${run.retainedMiB.toFixed(1)} MiB and peaked ${run.peakMiB.toFixed(1)} MiB ` +
          `over ${count} inputs (bounds ${MEMORY_BOUNDS.retainedMiB} and ${MEMORY_BOUNDS.peakMiB} MiB)`,
      );
    }
    out[target.name] = run;
  }
  return out;
}
