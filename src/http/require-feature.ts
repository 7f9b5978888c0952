import type { preHandlerAsyncHookHandler } from 'fastify';

import { assertFeature } from '../config/feature-guard.js';
import type { Config } from '../config/index.js';
import type { FeatureName } from '../config/features.js';

import { sendError } from './errors.js';

/**
 * The route form of the one feature guard (`assertFeature`): a preHandler that answers 403
 * `{"error":"<message>","code":"FEATURE_DISABLED","feature":"<name>"}` unless the feature is
 * enabled. A gated route lists it in its options:
 *
 *     app.post('/api/files/upload', { preHandler: requireFeature(ctx.config, 'attachments') }, ...)
 */
export function requireFeature(config: Config, feature: FeatureName): preHandlerAsyncHookHandler {
  return async function featureGuard(_request, reply) {
    try {
      assertFeature(config, feature);
    } catch (err) {
      return sendError(reply, err);
    }
  };
}
