import { featureDisabled } from '../errors.js';

import type { FeatureName } from './features.js';

import { featureEnabled, type Config } from './index.js';

/**
 * The one guard every feature-gated resolver and route calls: FEATURE_DISABLED with `feature`
 * unless the feature is enabled (a disabled or unavailable feature is off alike).
 */
export function assertFeature(config: Config, feature: FeatureName): void {
  if (!featureEnabled(config, feature)) throw featureDisabled(feature);
}
