import { GraphqlExecutor, type ExecutorOptions } from './executor.js';
import { buildExecutableSchema, readSdl } from './load-schema.js';
import { allResolvers } from './resolvers/index.js';

/** The executor of the contract's schema with every area's resolvers (built by the edges). */
export function buildGraphqlExecutor(opts: ExecutorOptions = {}): GraphqlExecutor {
  return new GraphqlExecutor(buildExecutableSchema(readSdl(), allResolvers()), opts);
}
