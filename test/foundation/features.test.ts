import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { assertFeature } from '../../src/config/feature-guard.js';
import { loadConfig, type FeatureName } from '../../src/config/index.js';
import type { AppContext } from '../../src/context.js';
import { GraphqlExecutor } from '../../src/graphql/executor.js';
import { buildExecutableSchema, readSdl } from '../../src/graphql/load-schema.js';
import { allResolvers } from '../../src/graphql/resolvers/index.js';
import { mergeResolvers } from '../../src/graphql/resolver-types.js';
import { buildHttpApp } from '../../src/http/app.js';
import { requireFeature } from '../../src/http/require-feature.js';
import {
  createMigratedContext,
  createTestDatabase,
  startTestServer,
  type TestDatabase,
} from '../_util/app.js';

const BOOT_LINE = 'instance features (SVC_FEATURES_DISABLED)';
const states = (env: Record<string, string>) =>
  Object.fromEntries(loadConfig(env).features.map((f) => [f.key, f.state]));

describe('feature switches', () => {
  it('logs the boot line at INFO with the disabled and unavailable lists', async () => {
    const server = await startTestServer({
      env: { SVC_FEATURES_DISABLED: ' ai_commands ,, attachments ' },
    });
    try {
      const lines = server.logs.lines.filter((l) => l.msg === BOOT_LINE);
      expect(lines).toHaveLength(1);
      const line = lines[0]!;
      expect(line.level).toBe(30);
      // Both lists in the fixed feature order, whatever order the variable used.
      // String fields (the contract's wording), names comma-separated.
      expect(line.disabled).toBe('attachments,ai_commands');
      expect(line.unavailable).toBe('email (set SVC_SMTP_HOST and SVC_SMTP_FROM to send mail)');
    } finally {
      await server.stop();
    }
  });

  it('logs empty lists when everything is enabled', async () => {
    const server = await startTestServer({
      env: { SVC_SMTP_HOST: 'smtp.example.org', SVC_SMTP_FROM: 'svc@example.org' },
    });
    try {
      const line = server.logs.find(BOOT_LINE)!;
      expect(line.disabled).toBe('');
      expect(line.unavailable).toBe('');
    } finally {
      await server.stop();
    }
  });

  it('refuses an unknown name, listing the known names in order', () => {
    expect(() => loadConfig({ SVC_FEATURES_DISABLED: 'email,Attachments' })).toThrow(
      'SVC_FEATURES_DISABLED: unknown feature "Attachments"; known features are attachments, link_previews, email, custom_emoji, workspace_plugins, ai_commands',
    );
  });

  it('makes email unavailable unless both SVC_SMTP_HOST and SVC_SMTP_FROM are set', () => {
    expect(states({}).email).toBe('unavailable');
    expect(states({ SVC_SMTP_HOST: 'smtp.example.org' }).email).toBe('unavailable');
    expect(states({ SVC_SMTP_FROM: 'svc@example.org' }).email).toBe('unavailable');
    expect(
      states({ SVC_SMTP_HOST: 'smtp.example.org', SVC_SMTP_FROM: 'svc@example.org' }).email,
    ).toBe('enabled');
    const reason = loadConfig({}).features.find((f) => f.key === 'email')!.reason!;
    expect(reason).toContain('SVC_SMTP_HOST');
    expect(reason).toContain('SVC_SMTP_FROM');
  });

  it('lets disabled win over unavailable, with no reason', () => {
    const email = loadConfig({ SVC_FEATURES_DISABLED: 'email' }).features.find(
      (f) => f.key === 'email',
    );
    expect(email).toEqual({ key: 'email', state: 'disabled', reason: null });
  });

  it('enables every feature but email when nothing is set', () => {
    expect(states({})).toEqual({
      attachments: 'enabled',
      link_previews: 'enabled',
      email: 'unavailable',
      custom_emoji: 'enabled',
      workspace_plugins: 'enabled',
      ai_commands: 'enabled',
    });
  });
});

/**
 * The one guard, in both forms, on a real app: a test-only GraphQL field and a test-only route,
 * each gated on `attachments` (disabled), `email` (unavailable) or `custom_emoji` (enabled).
 */
describe('the feature guard', () => {
  let database: TestDatabase;
  let ctx: AppContext;
  let app: FastifyInstance;
  beforeAll(async () => {
    database = await createTestDatabase();
    ctx = await createMigratedContext(
      database,
      { SVC_FEATURES_DISABLED: 'attachments' },
      { log: pino({ level: 'silent' }), noJobs: true },
    );
    const sdl = `${readSdl()}\nextend type Query { gated(feature: String!): Boolean! }\n`;
    const gated = (_: unknown, args: { feature: FeatureName }) => {
      assertFeature(ctx.config, args.feature);
      return true;
    };
    const graphql = new GraphqlExecutor(
      buildExecutableSchema(sdl, mergeResolvers(allResolvers(), { Query: { gated } })),
    );
    app = await buildHttpApp(ctx, { graphql });
    for (const feature of ['attachments', 'email', 'custom_emoji'] as const) {
      app.get(
        `/api/test-gated/${feature}`,
        { preHandler: requireFeature(ctx.config, feature) },
        async () => ({ ok: true }),
      );
    }
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await ctx?.close();
    await database?.drop();
  });

  const query = (feature: string) =>
    app.inject({
      method: 'POST',
      url: '/api',
      headers: { 'content-type': 'application/json' },
      payload: { query: 'query($f: String!) { gated(feature: $f) }', variables: { f: feature } },
    });

  it.each(['attachments', 'email'])(
    'answers FEATURE_DISABLED with the feature in GraphQL while %s is off',
    async (feature) => {
      const res = await query(feature);
      expect(res.statusCode).toBe(200);
      const error = res.json().errors[0];
      expect(error.extensions).toMatchObject({ code: 'FEATURE_DISABLED', feature });
      expect(typeof error.extensions.request_id).toBe('string');
      expect(error.path).toEqual(['gated']);
    },
  );

  it('runs the resolver while the feature is enabled', async () => {
    expect((await query('custom_emoji')).json()).toEqual({ data: { gated: true } });
  });

  it.each(['attachments', 'email'])(
    'answers a route 403 {"error","code","feature"} while %s is off',
    async (feature) => {
      const res = await app.inject({ method: 'GET', url: `/api/test-gated/${feature}` });
      expect(res.statusCode).toBe(403);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['code', 'error', 'feature']);
      expect(body.code).toBe('FEATURE_DISABLED');
      expect(body.feature).toBe(feature);
      expect(body.error).toContain(feature);
    },
  );

  it('lets the route run while the feature is enabled', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/test-gated/custom_emoji' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
  });
});
