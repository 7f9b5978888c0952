import type { FastifyInstance } from 'fastify';
import pino from 'pino';

import type { AppContext } from '../../src/context.js';
import { GraphqlExecutor } from '../../src/graphql/executor.js';
import { buildExecutableSchema, readSdl } from '../../src/graphql/load-schema.js';
import { allResolvers } from '../../src/graphql/resolvers/index.js';
import { mergeResolvers, type LooseResolvers } from '../../src/graphql/resolver-types.js';
import { buildHttpApp, type HttpAppOptions } from '../../src/http/app.js';
import {
  createMigratedContext,
  createTestDatabase,
  LogCapture,
  type TestDatabase,
} from '../_util/app.js';

/** A real app whose schema has extra test-only fields, and extra test-only routes. */
export interface CustomApp {
  ctx: AppContext;
  app: FastifyInstance;
  logs: LogCapture;
  close(): Promise<void>;
}

export async function createCustomApp(opts: {
  env?: Record<string, string>;
  sdl?: string;
  resolvers?: (ctx: AppContext) => LooseResolvers;
  /** Extra routes in the /api and /s2s/v1 trees, and the s2s verifier. */
  http?: HttpAppOptions;
}): Promise<CustomApp> {
  const database: TestDatabase = await createTestDatabase();
  const logs = new LogCapture();
  const ctx = await createMigratedContext(database, opts.env, {
    log: pino({ level: 'debug' }, { write: (s: string) => logs.write(s) }),
    noJobs: true,
  });
  const graphql = opts.sdl
    ? new GraphqlExecutor(
        buildExecutableSchema(
          `${readSdl()}\n${opts.sdl}\n`,
          mergeResolvers(allResolvers(), opts.resolvers?.(ctx) ?? {}),
        ),
      )
    : undefined;
  const app = await buildHttpApp(ctx, { ...opts.http, graphql });
  await app.ready();
  return {
    ctx,
    app,
    logs,
    close: async () => {
      await app.close();
      await ctx.close();
      await database.drop();
    },
  };
}
