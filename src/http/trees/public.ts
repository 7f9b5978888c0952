import type { FastifyInstance } from 'fastify';

import type { AppContext } from '../../context.js';
import { registerAdmission } from '../plugins/admission.js';

import { notFoundHandler } from './not-found.js';

/** Registers routes outside /api and /s2s (readiness, discovery), at their full paths. */
export type PublicRoutes = (app: FastifyInstance, ctx: AppContext) => void;

/**
 * Routes outside /api and /s2s: the deny list applies, no origin check, no address limit.
 * /healthz has a tree of its own, which admits even a denied address (contract: Refusals).
 * Paths no tree claims end here, as a 404 after the deny list.
 */
export function registerPublicTrees(
  app: FastifyInstance,
  ctx: AppContext,
  trees: { health: PublicRoutes; public: readonly PublicRoutes[] },
): void {
  void app.register(async (health) => {
    registerAdmission(health, ctx.admission, 'health');
    trees.health(health, ctx);
  });
  void app.register(async (open) => {
    registerAdmission(open, ctx.admission, 'public');
    for (const register of trees.public) register(open, ctx);
    open.setNotFoundHandler(notFoundHandler);
  });
}
